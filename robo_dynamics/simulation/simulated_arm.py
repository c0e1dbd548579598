"""A simulated arm: state, the torque command it holds, and a fixed-step integrator.

The command is applied as given (zero-order hold) for at most `command_timeout` seconds of
simulated time after it arrives. Then, without `brakes`, zero torque (a drive whose
controller went silent); with `brakes`, the brakes engage and hold the arm where it is, as
torque-controlled arms do when their controller falls silent. With `brakes` the arm is also
held until the first command arrives, as a real arm is until its controller starts; a new
command releases it. The joint torque measured while braked is the torque that holds the
arm, g(q) (what its torque sensors, or its own position loop, report before an external
torque controller takes over). The simulated model may differ from the controller's
(payload mismatch).
"""

import numpy as np

from .arm_dynamics import ArmDynamics
from .integrators import INTEGRATORS


class SimulatedArm:
    """Integrates solver.model's dynamics from (q0, v0); see the module docstring.

    solver: DynamicsSolver of the simulated model. integrator: a key of INTEGRATORS.
    friction: apply the model's <dynamics damping friction>. time_step h [s].
    """

    def __init__(self, solver, q0, v0=None, integrator="rk4", time_step=1e-3,
                 command_timeout=0.05, friction=False, brakes=False):
        model = solver.model
        if integrator not in INTEGRATORS:
            raise ValueError(f"unknown integrator {integrator!r}; expected one of "
                             f"{sorted(INTEGRATORS)}")
        if not time_step > 0.0:
            raise ValueError(f"time step must be > 0, got {time_step}")
        self.dynamics = ArmDynamics(solver, model.damping if friction else None,
                                    model.friction if friction else None)
        self.step_function = INTEGRATORS[integrator]
        self.h = float(time_step)
        self.command_timeout = float(command_timeout)
        self.q = np.array(q0, dtype=float)
        self.v = np.zeros(model.dof) if v0 is None else np.array(v0, dtype=float)
        self.t = 0.0
        self.command = np.zeros(model.dof)
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
            return self.dynamics.solver.gravity(self.q)
        return self.applied_torque()

    def step(self):
        """Advance one time step h; returns the torque that was applied."""
        tau = self.applied_torque()
        if self.brakes and not self.braked and self.t - self.command_time > self.command_timeout:
            self.braked = True         # the controller fell silent: brake, stop where it is
            self.v = np.zeros_like(self.v)
        if not self.braked:
            self.q, self.v = self.step_function(self.dynamics, self.q, self.v, tau, self.h)
        self.t += self.h
        return tau
