"""sim_arm: a simulated arm that closes the loop in place of the hardware.

Advances the URDF's arm at a fixed step — with the library's dynamics (engine internal) or
with MuJoCo (engine mujoco: an independent engine, optionally with rotor armature, the
URDF's joint friction and a box obstacle; simulation/mujoco_plant.py) — and publishes
joint_states (positions, velocities and the applied motor torques as effort; while the
brakes hold, the holding torque) at
publish_rate (at most one per time step h), stamped with the simulated time of the state
on the clock's time at start-up (as a driver stamps the time of measurement; a simulation
that falls behind the clock slows down, and its stamps fall behind with it, so that stamp
differences stay the simulated intervals), the efforts with Gaussian noise of effort_noise
[N·m]; takes effort commands
as std_msgs/Float64MultiArray in command_joints order (what a ros2_control
JointGroupEffortController receives) on `effort_commands`; holds the last command for at
most command_timeout, then brakes (or, with brakes false, applies zero). A payload the
controller does not know about can be added to make model errors visible.
A push: ~/external_wrench (geometry_msgs/WrenchStamped, frame_id = the link; force and
torque at the link's origin in its axes) acts on the arm until replaced (a zero wrench ends
it); it is not in the measured efforts, as on a real arm. Its joint torques (the truth an
external-torque estimate is judged against) are published on ~/external_joint_torques
(JointState) with each state while a wrench acts, and once more (zeros) when it ends.
With lockstep, simulated time no longer follows the clock: it advances by one publish
period once a command has arrived after the last joint_states (or after lockstep_timeout
of wall time, with the command held), at most publish_rate times a second, and goes out on
/clock just before the state; nodes with use_sim_time run on it. The loop then does what it
would do on an unloaded machine however loaded this one is, only slower.
"""

import sys
import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .. import make_solver
from ..simulation.simulated_arm import IntegratedPlant, SimulatedArm
from . import parameters
from .chain import command_index, load_chain, start_up_payload
from .spin import run

THROTTLE = 2.0
MAX_CATCH_UP = 20          # integration steps per timer tick at most


class SimArmNode(Node):
    """See the module docstring; parameters: parameters.SIM_ARM."""

    def __init__(self, **kwargs):
        super().__init__("sim_arm", **kwargs)
        parameters.declare(self, parameters.SIM_ARM)
        p = parameters.read(self, parameters.SIM_ARM)
        description = p["robot_description"] or p["robot_description_file"]
        if not description:
            raise ValueError("set robot_description or robot_description_file")
        model = load_chain(description, p)       # the plant takes the file as it is; the
        reason = parameters.validate(p, model.dof)   # dynamics node reports doubtful inertias
        if reason:
            raise ValueError(f"invalid parameter: {reason}")
        payload = start_up_payload(p)
        if payload is not None and payload[1] > 0.0:
            model = model.with_payload(*payload)
        q0 = np.zeros(model.dof) if p["initial_positions"] is None else np.array(
            p["initial_positions"], dtype=float)
        if q0.shape != (model.dof,) or not np.all(np.isfinite(q0)):
            raise ValueError(f"initial_positions needs {model.dof} finite values")
        self.arm = SimulatedArm(self._plant(model, q0, p), q0,
                                command_timeout=p["command_timeout"], brakes=p["brakes"])
        self.command_index = command_index(model, p["command_joints"])
        self.model = model
        self.names = list(model.joint_names)
        self.rejected = 0
        self.noise = p["effort_noise"]
        self.rng = np.random.default_rng()
        self.pub = self.create_publisher(JointState, "joint_states", 10)
        self.pub_external = self.create_publisher(JointState, "~/external_joint_torques", 10)
        self.pushing = False       # a wrench acted over the last published state
        self.create_subscription(Float64MultiArray, "effort_commands", self._on_command, 10)
        self.create_subscription(WrenchStamped, "~/external_wrench", self._on_wrench, 10)
        self.start = None          # clock time [s] at which simulated time was 0
        self.epoch = None          # the same [ns], never shifted: the stamps' origin
        self.lockstep = p["lockstep"]
        self.lockstep_timeout = p["lockstep_timeout"]
        self.period = 1.0 / p["publish_rate"]     # [s]
        self.steps_per_period = max(1, round(self.period / self.arm.h))
        self.awaiting = False      # lockstep: no command yet for the last state published
        self.published_at = 0.0    # lockstep: time.monotonic() of the last state [s]
        if self.lockstep:
            self.pub_clock = self.create_publisher(Clock, "/clock", 10)
        self.create_timer(self.period, self._lockstep_tick if self.lockstep else self._tick)
        self.get_logger().info(
            f"simulating {model.name} on engine {p['engine']} ({model.dof} joints, "
            f"{p['integrator']}, h = "
            f"{self.arm.h} s, joint_states at {p['publish_rate']} Hz)"
            + (f", unknown payload {p['payload_mass']} kg at {p['payload_link']}"
               if model.payloads else ""))

    @staticmethod
    def _plant(model, q0, p):
        """The plant of parameters `p`: the library's dynamics, or MuJoCo checked against
        them at q0 (ValueError naming the difference)."""
        solver = make_solver(model, p["backend"])
        extras = [name for name in ("armature", "obstacle_box") if p[name] is not None]
        damping = coulomb = None
        if p["friction"]:      # the URDF's <dynamics>, unless given
            damping = parameters.per_joint(p["joint_damping"], model.dof, "joint_damping")
            coulomb = parameters.per_joint(p["joint_friction"], model.dof, "joint_friction")
            damping = model.damping if damping is None else np.array(damping)
            coulomb = model.friction if coulomb is None else np.array(coulomb)
        if p["engine"] == "internal":
            if extras:
                raise ValueError(f"{' and '.join(extras)} need engine mujoco")
            return IntegratedPlant(solver, p["integrator"], p["time_step"], damping, coulomb)
        from ..simulation.mujoco_plant import MujocoPlant      # the only mujoco importer
        armature = parameters.per_joint(p["armature"], model.dof, "armature")
        plant = MujocoPlant(model, p["integrator"], p["time_step"], damping, coulomb,
                            armature=armature, obstacle_box=p["obstacle_box"])
        velocities = np.linspace(-0.5, 0.5, model.dof)      # Coriolis terms checked too
        plant.check_against(solver, q0, velocities)
        return plant

    def _on_command(self, msg):
        data = np.asarray(msg.data, dtype=float)
        if data.shape != self.command_index.shape or not np.all(np.isfinite(data)):
            self.rejected += 1
            self.get_logger().warning(
                f"effort command rejected ({self.rejected} so far): expected "
                f"{self.command_index.size} finite values, got {data.size}",
                throttle_duration_sec=THROTTLE)
            return
        tau = np.zeros(self.model.dof)                 # joints not commanded get zero
        tau[self.command_index] = data
        self.arm.set_command(tau)
        if self.awaiting:
            self.awaiting = False
            if time.monotonic() - self.published_at >= self.period:
                self._lockstep_advance()     # due already: not waiting for the timer

    def _on_wrench(self, msg):
        f, m = msg.wrench.force, msg.wrench.torque
        try:
            self.arm.set_external_wrench(msg.header.frame_id, [f.x, f.y, f.z],
                                         [m.x, m.y, m.z])
        except ValueError as exc:
            self.rejected += 1
            self.get_logger().warning(f"external wrench rejected ({self.rejected} so far): "
                                      f"{exc}", throttle_duration_sec=THROTTLE)
            return
        self.get_logger().info(
            f"external wrench on '{msg.header.frame_id}': force {[f.x, f.y, f.z]} N, torque "
            f"{[m.x, m.y, m.z]} N·m" if self.arm.wrench is not None else "external wrench "
            "removed")

    def _tick(self):
        """Advance simulated time to the clock (in steps of h, at most MAX_CATCH_UP per tick,
        so a stalled process slows the simulation down instead of jumping), then publish."""
        now = self.get_clock().now()
        seconds = now.nanoseconds * 1e-9
        if self.start is None:
            self.start, self.epoch = seconds, now.nanoseconds
        steps = int((seconds - self.start - self.arm.t) / self.arm.h + 0.5)
        if steps <= 0:
            return                           # nothing new to measure yet
        applied = self._advance(min(steps, MAX_CATCH_UP))
        if steps > MAX_CATCH_UP:             # fell behind: let simulated time slip
            self.start += (steps - MAX_CATCH_UP) * self.arm.h
        self._publish(applied, self._stamp(now.clock_type))

    def _lockstep_tick(self):
        """Advance unless the command for the last state is still on its way (for less
        than lockstep_timeout)."""
        if not self.awaiting or time.monotonic() - self.published_at >= self.lockstep_timeout:
            self._lockstep_advance()

    def _lockstep_advance(self):
        """One publish period on; /clock, then the state."""
        if self.epoch is None:
            self.epoch = self.get_clock().now().nanoseconds
        applied = self._advance(self.steps_per_period)
        stamp = self._stamp(self.get_clock().clock_type)
        self.pub_clock.publish(Clock(clock=stamp))
        self._publish(applied, stamp)
        self.awaiting, self.published_at = True, time.monotonic()

    def _advance(self, steps):
        """`steps` (≥ 1) time steps on; the motor torque applied over the last one."""
        for _ in range(steps):
            applied = self.arm.step()
        return applied

    def _stamp(self, clock_type):
        """The simulated time now on the clock's time at start-up (builtin Time)."""
        return Time(nanoseconds=self.epoch + round(self.arm.t * 1e9),
                    clock_type=clock_type).to_msg()

    def _publish(self, applied, stamp):
        """joint_states (and the push's joint torques) of the state now, stamped `stamp`;
        applied: the motor torques over the last step."""
        effort = self.arm.measured_effort() if self.arm.braked else applied
        if self.noise > 0.0:
            effort = effort + self.rng.normal(0.0, self.noise, len(effort))
        msg = JointState(name=self.names, position=self.arm.q.tolist(),
                         velocity=self.arm.v.tolist(), effort=effort.tolist())
        msg.header.stamp = stamp
        self.pub.publish(msg)
        if self.pushing or self.arm.wrench is not None:
            truth = JointState(name=self.names, effort=self.arm.external.tolist())
            truth.header.stamp = stamp
            self.pub_external.publish(truth)
        self.pushing = self.arm.wrench is not None


def main(args=None):
    return run(SimArmNode, args)


if __name__ == "__main__":
    sys.exit(main())
