"""A simulated arm: state, the torque command it holds, and a plant that advances it.

The command is applied as given (zero-order hold) for at most `command_timeout` seconds of
simulated time after it arrives. Then, without `brakes`, zero torque (a drive whose
controller went silent); with `brakes`, the brakes engage and hold the arm where it is, as
torque-controlled arms do when their controller falls silent. With `brakes` the arm is also
held until the first command arrives, as a real arm is until its controller starts; a new
command releases it. The joint torque measured while braked is the torque that holds the
arm, g(q) (what its torque sensors, or its own position loop, report before an external
torque controller takes over). The simulated model may differ from the controller's
(payload mismatch), and the plant may be another engine (mujoco_plant.py).
"""

import numpy as np

from .arm_dynamics import ArmDynamics
from .integrators import INTEGRATORS


class IntegratedPlant:
    """The package's own plant: solver.model's dynamics plus joint friction (viscous
    `damping` [N·m·s/rad], Coulomb `coulomb` [N·m], (n,) each, None: none; the package's
    friction law) advanced by one of INTEGRATORS at a fixed step h [s]."""

    engine = "internal"

    def __init__(self, solver, integrator="rk4", time_step=1e-3, damping=None, coulomb=None):
        model = solver.model
        if integrator not in INTEGRATORS:
            raise ValueError(f"unknown integrator {integrator!r}; expected one of "
                             f"{sorted(INTEGRATORS)}")
        if not time_step > 0.0:
            raise ValueError(f"time step must be > 0, got {time_step}")
        self.model = model
        self.dynamics = ArmDynamics(solver, damping, coulomb)
        self.step_function = INTEGRATORS[integrator]
        self.h = float(time_step)

    def advance(self, q, v, tau):
        """(q, q̇) one step h later under the joint torques tau held over the step."""
        return self.step_function(self.dynamics, q, v, tau, self.h)

    def holding_torque(self, q):
        """The joint torques that hold the arm still at q: g(q)."""
        return self.dynamics.solver.gravity(q)


class SimulatedArm:
    """The arm of `plant` (IntegratedPlant or mujoco_plant.MujocoPlant) from (q0, v0); see
    the module docstring."""

    def __init__(self, plant, q0, v0=None, command_timeout=0.05, brakes=False):
        n = plant.model.dof
        self.plant = plant
        self.h = plant.h
        self.command_timeout = float(command_timeout)
        self.q = np.array(q0, dtype=float)
        self.v = np.zeros(n) if v0 is None else np.array(v0, dtype=float)
        self.t = 0.0
        self.command = np.zeros(n)
        self.command_time = -np.inf
        self.brakes = bool(brakes)
        self.braked = self.brakes      # the brakes hold the arm now

    def set_command(self, tau):
        """Hold joint torques tau (n,) [N·m or N], model order, from now on."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != self.command.shape or not np.all(np.isfinite(tau)):
            raise ValueError(f"command must be {self.command.size} finite torques")
        self.command = tau
        self.command_time = self.t
        self.braked = False

    def applied_torque(self):
        """The torque applied now: the held command, or zero once it has timed out."""
        if self.t - self.command_time > self.command_timeout:
            return np.zeros_like(self.command)
        return self.command

    def measured_effort(self):
        """The joint torques a sensor reads now (n,): the holding torque g(q) while braked,
        else the applied torque."""
        if self.braked:
            return self.plant.holding_torque(self.q)
        return self.applied_torque()

    def step(self):
        """Advance one time step h; returns the torque that was applied."""
        tau = self.applied_torque()
        if self.brakes and not self.braked and self.t - self.command_time > self.command_timeout:
            self.braked = True         # the controller fell silent: brake, stop where it is
            self.v = np.zeros_like(self.v)
        if not self.braked:
            self.q, self.v = self.plant.advance(self.q, self.v, tau)
        self.t += self.h
        return tau
