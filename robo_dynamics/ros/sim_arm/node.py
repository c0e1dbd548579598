"""sim_arm: a simulated arm that closes the loop in place of the hardware.

Advances the URDF's arm at a fixed step — with the library's dynamics (engine internal) or
with MuJoCo (engine mujoco: an independent engine, optionally with rotor armature, the
URDF's joint friction and a box obstacle; simulation/mujoco_plant.py; a closed linkage,
given actuated_joints and loop_closures as dynamics_node is: MuJoCo with its loops as
equality constraints, simulation/mujoco_closed_chain.py, its motors' and passive joints'
states) — and
publishes joint_states (positions, velocities and the applied motor torques as effort; while the
brakes hold, the holding torque, without noise) at
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
it); it is not in the measured efforts, as on a real arm. A hand in the tool's way
(hand_stand_in; simulation/hand_stand_in.py) pushes back on the tool likewise, its force
on ~/hand_force (WrenchStamped, base frame) with each state. Its joint torques (the truth an
external-torque estimate is judged against) are published on ~/external_joint_torques
(JointState) with each state while a wrench acts, once more (zeros) when it ends, and at
once when a wrench arrives (stamped with the state it acts from: a receipt).
With lockstep, simulated time no longer follows the clock: it starts at 0 and advances by
one publish period once the command for the last joint_states has arrived (never without
it: after lockstep_timeout of wall time the same /clock and state go out again; once
commands have come, after lockstep_silence without one the controller is taken as silent, as
a drive's watchdog takes it, and time goes on: the command held for command_timeout, then the
brakes, until a command comes again), at most
lockstep_max_speed times as fast as real time, and goes out on /clock just before the
state; nodes with use_sim_time run on it. With lockstep_supervised it also stops at the
latest time received on ~/run_until and announces on ~/paused (the time of the state it
holds at, once the command for it is in), so that a supervisor acts on a paused simulation. The
loop then gives the same result on a fast, a slow or a loaded machine (the noise too: it
comes from noise_seed), only sooner or later.
"""

import sys
import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ... import make_solver
from ...control.contact_safety import REGIONS
from ...simulation.hand_stand_in import HandStandIn
from ...simulation.simulated_arm import IntegratedPlant, SimulatedArm
from .. import parameters
from ..chain import command_index, load_chain, start_up_payload
from ..conversions import seconds
from ..dynamics_node.closure_parameters import declare_closures, linkage_values
from ..spin import run

THROTTLE = 2.0
STALL = 10          # lockstep timeouts without a command: a stall (a warning), not a wait
MAX_CATCH_UP = 20          # integration steps per timer tick at most


def linkage_plant(model, q0, p):
    """A closed linkage's plant for parameters `p`: MuJoCo with its loops as equality
    constraints, five steps per time_step. ValueError for what it does not simulate yet."""
    unsupported = [name for name, given in (
        ("engine internal", p["engine"] != "mujoco"), ("friction", p["friction"]),
        ("armature", p["armature"] is not None),
        ("obstacle_box", p["obstacle_box"] is not None)) if given]
    if unsupported:
        raise ValueError(f"a closed linkage is simulated by engine mujoco without "
                         f"{', '.join(unsupported)} (not yet)")
    from ...simulation.mujoco_closed_chain import MujocoLinkagePlant
    return MujocoLinkagePlant(model, q0, p["time_step"])


class SimArmNode(Node):
    """See the module docstring; parameters: parameters.SIM_ARM."""

    def __init__(self, **kwargs):
        super().__init__("sim_arm", **kwargs)
        parameters.declare(self, parameters.SIM_ARM)
        declare_closures(self)       # a closed linkage's loop_closures.<name>.<field>
        p = linkage_values(self, parameters.read(self, parameters.SIM_ARM))
        model, q0 = self._model_and_start(p)
        self.arm = SimulatedArm(self._plant(model, q0, p), q0,
                                command_timeout=p["command_timeout"], brakes=p["brakes"])
        if p["hand_stand_in"]:
            if getattr(model, "mechanism", None) is not None:
                raise ValueError("hand_stand_in: not on a closed linkage")
            hand = REGIONS["hand"]             # ISO/TS 15066's: 75 N/mm before 0.6 kg
            self.arm.hand = HandStandIn(p["hand_stand_in"][:3], p["hand_stand_in"][3:],
                                        hand.spring, hand.mass, p["hand_stand_in_clamped"])
        self.command_index = command_index(model, p["command_joints"])
        self.model = model
        self.names = list(model.joint_names)
        self.rejected = 0
        self.noise = p["effort_noise"]
        self.rng = np.random.default_rng(p["noise_seed"] if p["noise_seed"] >= 0 else None)
        self.pushing = False       # a wrench acted over the last published state
        self.start = None          # clock time [s] at which simulated time was 0
        self.epoch = None          # the same [ns], never shifted: the stamps' origin
        self.period = 1.0 / p["publish_rate"]     # [s]
        self.steps_per_period = max(1, round(self.period / self.arm.h))
        self._lockstep_state(p)
        self._entities(p)
        self.get_logger().info(
            f"simulating {model.name} on engine {p['engine']} ({model.dof} joints, "
            f"{p['integrator']}, h = "
            f"{self.arm.h} s, joint_states at {p['publish_rate']} Hz)"
            + (f", unknown payload {p['payload_mass']} kg at {p['payload_link']}"
               if model.payloads else ""))

    @staticmethod
    def _model_and_start(p):
        """(the chain with its start-up payload, q0 (n,)) from the parameters; ValueError
        for what they cannot give."""
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
        return model, q0

    def _lockstep_state(self, p):
        """What lockstep keeps between states (module docstring)."""
        self.lockstep = p["lockstep"]
        self.lockstep_timeout = p["lockstep_timeout"]
        self.lockstep_silence = p["lockstep_silence"]
        self.silent = False        # lockstep: the controller fell silent; time goes on
        self.awaiting = False      # lockstep: no command yet for the last state published
        self.published_at = -np.inf   # lockstep: time.monotonic() of the last publication
        self.first_sent = -np.inf     # … and of the last state's first
        self.advanced_at = -np.inf    # lockstep: time.monotonic() of the last advance
        self.min_wall_period = (self.period / p["lockstep_max_speed"]
                                if p["lockstep_max_speed"] > 0.0 else 0.0)
        self.horizon = 0.0 if p["lockstep_supervised"] else np.inf   # [s] simulated
        self.last_out = None       # lockstep: (Clock, JointState) last published
        self.repeats = 0           # lockstep: states published again for want of a command
        self.paused_at = None      # supervised: the simulated time ~/paused last announced

    def _entities(self, p):
        """The node's publishers, subscriptions and timer."""
        self.pub = self.create_publisher(JointState, "joint_states", 10)
        self.pub_external = self.create_publisher(JointState, "~/external_joint_torques", 10)
        self.create_subscription(Float64MultiArray, "effort_commands", self._on_command, 10)
        self.create_subscription(WrenchStamped, "~/external_wrench", self._on_wrench, 10)
        if self.arm.hand is not None:
            self.pub_hand = self.create_publisher(WrenchStamped, "~/hand_force", 10)
        if self.lockstep:
            self.epoch = 0
            self.pub_clock = self.create_publisher(Clock, "/clock", 10)
            if p["lockstep_supervised"]:
                latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                                     reliability=ReliabilityPolicy.RELIABLE)
                self.create_subscription(Clock, "~/run_until", self._on_run_until, latched)
                self.pub_paused = self.create_publisher(Clock, "~/paused", latched)
        # lockstep as fast as the loop goes: a command or ~/run_until advances the time, the
        # timer only starts the loop and sends a state again when no command came
        tick = (self.period if not self.lockstep or self.min_wall_period > 0.0
                else min(self.period * 10, self.lockstep_timeout / 4))
        self.create_timer(tick, self._lockstep_tick if self.lockstep else self._tick)

    @staticmethod
    def _plant(model, q0, p):
        """The plant of parameters `p`: the library's dynamics, or MuJoCo checked against
        them at q0 (ValueError naming the difference)."""
        if getattr(model, "mechanism", None) is not None:
            return linkage_plant(model, q0, p)
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
        from ...simulation.mujoco_plant import MujocoPlant
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
        if self.silent:
            self.silent = False
            self.get_logger().info(f"lockstep: commands again at t = {self.arm.t:.3f} s")
        if self.awaiting:
            self.awaiting = False
            self._lockstep_tick()            # due already: not waiting for the timer

    def _on_wrench(self, msg):
        f, m = msg.wrench.force, msg.wrench.torque
        try:
            torque = self.arm.set_external_wrench(msg.header.frame_id, [f.x, f.y, f.z],
                                                  [m.x, m.y, m.z])
        except ValueError as exc:
            self.rejected += 1
            self.get_logger().warning(f"external wrench rejected ({self.rejected} so far): "
                                      f"{exc}", throttle_duration_sec=THROTTLE)
            return
        if self.epoch is not None:     # at once: what acts from now (and a receipt for
            self._publish_applied_wrench(torque)    # whoever waits for the push to land)
        self.get_logger().info(
            f"external wrench on '{msg.header.frame_id}': force {[f.x, f.y, f.z]} N, torque "
            f"{[m.x, m.y, m.z]} N·m" if self.arm.wrench is not None else "external wrench "
            "removed")

    def _publish_applied_wrench(self, torque):
        """~/external_joint_torques at the state now: `torque`, the joint torques of the
        wrench that acts from now on (zeros: none), stamped with the state's time."""
        truth = JointState(name=self.names, effort=torque.tolist())
        truth.header.stamp = self._stamp(self.get_clock().clock_type)
        self.pub_external.publish(truth)
        self.pushing = True

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

    def _on_run_until(self, msg):
        """A supervisor lets simulated time run up to msg.clock."""
        self.horizon = seconds(msg.clock)
        if self.last_out is not None:
            self._lockstep_tick()

    def _lockstep_tick(self):
        """The first state; then one period on once the command for the last state is in,
        within the horizon and the speed limit; without the command for lockstep_timeout,
        the last /clock and state again."""
        now = time.monotonic()
        if self.last_out is None:
            self._lockstep_publish(self.arm.measured_effort())
        elif self.awaiting and self.arm.command_time != -np.inf and (
                self.silent or now - self.first_sent >= self.lockstep_silence):
            self._silent_tick(now)
        elif self.awaiting:
            if now - self.published_at >= self.lockstep_timeout:
                self.repeats += 1
                if self.arm.command_time == -np.inf:    # no controller yet: it is starting
                    self.get_logger().info(
                        f"lockstep: waiting for the first command; the state at t = "
                        f"{self.arm.t:.3f} s published again every {self.lockstep_timeout:g} s",
                        throttle_duration_sec=THROTTLE)
                else:     # a controller may take its time (a model change): warn on a stall
                    late = now - self.first_sent
                    line = (f"lockstep: no command for the state at t = {self.arm.t:.3f} s "
                            f"after {late:.2g} s: published again ({self.repeats} so far)")
                    if late >= STALL * self.lockstep_timeout:   # rclpy: one severity per
                        self.get_logger().warning(line, throttle_duration_sec=THROTTLE)
                    else:                                        # call site
                        self.get_logger().info(line, throttle_duration_sec=THROTTLE)
                self._lockstep_send(*self.last_out)
        elif self.arm.t + self.period <= self.horizon + 1e-9:
            if now - self.advanced_at >= self.min_wall_period:
                self.advanced_at = now
                self._lockstep_publish(self._advance(self.steps_per_period))
        elif self.paused_at != self.arm.t:    # at the horizon, the last state answered
            self.paused_at = self.arm.t
            self.pub_paused.publish(self.last_out[0])

    def _silent_tick(self, now):
        """The controller is silent (no command for lockstep_silence): one period on, as the
        drive's own watchdog would go on (held command, then brakes), not faster than
        lockstep_max_speed allows."""
        if not self.silent:
            self.silent = True
            self.get_logger().warning(
                f"lockstep: no command for {now - self.first_sent:.2g} s (lockstep_silence "
                f"{self.lockstep_silence:g} s): the controller is silent; simulated time goes "
                f"on from t = {self.arm.t:.3f} s, the brakes engage after command_timeout")
        if now - self.advanced_at >= self.min_wall_period and \
                self.arm.t + self.period <= self.horizon + 1e-9:
            self.advanced_at = now
            self._lockstep_publish(self._advance(self.steps_per_period))

    def _lockstep_publish(self, applied):
        """/clock, then the state of simulated time now (applied: the motor torques over the
        last step); the command for it is awaited."""
        stamp = self._stamp(self.get_clock().clock_type)
        self.last_out = (Clock(clock=stamp), self._state_msg(applied, stamp))
        self._lockstep_send(*self.last_out)
        self.first_sent = self.published_at
        self._publish_external(stamp)

    def _lockstep_send(self, clock, state):
        self.pub_clock.publish(clock)
        self.pub.publish(state)
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
        self.pub.publish(self._state_msg(applied, stamp))
        self._publish_external(stamp)

    def _state_msg(self, applied, stamp):
        """The JointState of the state now: the applied motor torques plus the sensors'
        noise as effort; while braked, the holding torque (no noise: the drive's own
        figure, so that a controller's first command, which starts from it, is no kick)."""
        if self.arm.braked:       # the brakes' holding torque, as the drive reports it
            effort = self.arm.measured_effort()
        elif self.noise > 0.0:
            effort = applied + self.rng.normal(0.0, self.noise, len(applied))
        else:
            effort = applied
        names, q, v = self.names, self.arm.q, self.arm.v
        passive = getattr(self.arm.plant, "passive_joints", ())
        if passive:          # a linkage's passive joints too, as encoders on them report
            q_p, v_p = self.arm.plant.passive_state()      # (no motor: no effort)
            names, q, v = names + list(passive), np.append(q, q_p), np.append(v, v_p)
            effort = np.append(effort, np.zeros(len(passive)))
        msg = JointState(name=names, position=q.tolist(), velocity=v.tolist(),
                         effort=effort.tolist())
        msg.header.stamp = stamp
        return msg

    def _publish_external(self, stamp):
        """The push's joint torques over the last step, while a wrench acts and once after;
        a hand's force on the tool (base frame), with every state."""
        if self.pushing or self.arm.wrench is not None:
            truth = JointState(name=self.names, effort=self.arm.external.tolist())
            truth.header.stamp = stamp
            self.pub_external.publish(truth)
        self.pushing = self.arm.wrench is not None
        if self.arm.hand is not None:
            hand = WrenchStamped()
            hand.header.stamp, hand.header.frame_id = stamp, self.model.base_link
            f = hand.wrench.force
            f.x, f.y, f.z = (-self.arm.hand.force * self.arm.hand.axis).tolist()
            self.pub_hand.publish(hand)


def main(args=None):
    return run(SimArmNode, args)


if __name__ == "__main__":
    sys.exit(main())
