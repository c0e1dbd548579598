"""A simulated arm: state, the torque command it holds, and a plant that advances it.

The command is applied as given (zero-order hold) for at most `command_timeout` seconds of
simulated time after it arrives. Then, without `brakes`, zero torque (a drive whose
controller went silent); with `brakes`, the brakes engage and hold the arm where it is, as
torque-controlled arms do when their controller falls silent. With `brakes` the arm is also
held until the first command arrives, as a real arm is until its controller starts; a new
command releases it. The joint torque measured while braked is the torque that holds the
arm, g(q) (what its torque sensors, or its own position loop, report before an external
torque controller takes over). The simulated model may differ from the controller's
(payload mismatch), and the plant may be another engine (mujoco_plant.py). An external
wrench on any link (a push) acts on the arm but is not part of the measured torque, as on a
real arm.
"""

import numpy as np

from ..algorithms.kinematics import forward_kinematics
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

    def tip_frame(self, q):
        """(R, p): the tip's rotation and origin [m] in the base frame."""
        return self.dynamics.solver.tip_pose(q)

    def external_joint_torque(self, q, link, force, torque):
        """Jᵀ W (n,): the joint torques of the wrench W = (force [N], torque [N·m]) applied
        to `link` (a body of the chain, or its tip link) at its origin, in its axes."""
        model = self.model
        kin = forward_kinematics(model, np.asarray(q, dtype=float)[None])
        if link == model.tip_link:
            R, p, moved = kin.tip_R[0], kin.tip_p[0], model.dof
        elif link in model.body_links:
            k = model.body_links.index(link)
            R, p, moved = kin.R[0, k], kin.o[0, k], k + 1
        else:
            raise ValueError(f"link '{link}' is not a body of the chain (engine internal: "
                             f"one of {list(model.body_links)} or {model.tip_link})")
        f = R @ np.asarray(force, dtype=float)
        m0 = R @ np.asarray(torque, dtype=float) + np.cross(p, f)   # moment about the base
        tau = kin.S_ang[0] @ m0 + kin.S_lin[0] @ f                   # origin, screw axes S_j
        tau[moved:] = 0.0
        return tau


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
        self.wrench = None             # (link, force, torque) applied from outside, or None
        self.external = np.zeros(n)    # its joint torques over the last step (a hand's too)
        self.hand = None               # a hand_stand_in.HandStandIn the tool may meet

    def set_external_wrench(self, link, force, torque):
        """Apply force [N] and torque [N·m] to `link` at its origin, in its axes, from now
        until changed (a push); force and torque zero remove it. Returns its joint torques
        at the state now (n,). ValueError for a link the plant does not have."""
        force, torque = (np.asarray(x, dtype=float) for x in (force, torque))
        if force.shape != (3,) or torque.shape != (3,) or not (
                np.all(np.isfinite(force)) and np.all(np.isfinite(torque))):
            raise ValueError("an external wrench needs a finite force and torque (3 each)")
        # the plant checks the link as it computes the joint torques
        joint_torque = self.plant.external_joint_torque(self.q, link, force, torque)
        self.wrench = (link, force, torque) if (force.any() or torque.any()) else None
        return np.asarray(joint_torque, dtype=float)

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
        """Advance one time step h; returns the motor torque that was applied (the external
        wrench's joint torques over the step are in `external`)."""
        tau = self.applied_torque()
        if self.brakes and not self.braked and self.t - self.command_time > self.command_timeout:
            self.braked = True         # the controller fell silent: brake, stop where it is
            self.v = np.zeros_like(self.v)
        self.external = (np.zeros_like(tau) if self.wrench is None
                         else self.plant.external_joint_torque(self.q, *self.wrench))
        if self.hand is not None:      # the hand's spring on the tool, held over the step
            R, p = self.plant.tip_frame(self.q)
            tip = self.plant.model.tip_link
            self.external = self.external + self.plant.external_joint_torque(
                self.q, tip, R.T @ self.hand.press(p), np.zeros(3))
            self.hand.step(self.h)
        if not self.braked:
            self.q, self.v = self.plant.advance(self.q, self.v, tau + self.external)
        self.t += self.h
        return tau
