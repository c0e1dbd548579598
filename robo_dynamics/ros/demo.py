"""The closed-loop demo on the default arm: sim_arm → joint_states → dynamics_node →
effort commands → sim_arm, eight phases, each with fresh processes.

    python -m robo_dynamics.ros.demo [--duration S] [--rate HZ] [--engine mujoco|internal]
                                     [--free-running] [--output PNG] [--phases 7,8]

The plant is MuJoCo by default (sim_arm's engine mujoco): an engine that shares no code with
the node, reading the same URDF, with what a real arm has and the URDF does not — rotor
armature and joint friction (ARMATURE, JOINT_DAMPING, JOINT_FRICTION), unknown to the
node's model. With --engine internal the plant is the library itself (friction as above,
no armature): there gravity compensation holds the pose to rounding, which only shows that
the library agrees with itself. The simulated torque sensors are noisy (EFFORT_NOISE), and
the node estimates the external joint torques from them in every phase (its momentum
observer, default thresholds): the phases without a push must show no contact.
1./2. gravity compensation only, friction compensation off / on: the arm is released at a
   non-trivial pose; drift after the phase (rad);
3./4. computed-torque tracking of a smooth multi-joint trajectory, friction compensation
   off / on (the node's viscous_friction and coulomb_friction set to the plant's): RMS and
   max tracking error per joint, peak torque against the effort limits;
5. tracking with a 1 kg payload at the flange, declared to the node at start-up (friction
   compensation on);
6. gravity compensation with the payload known only to the simulation (the payload the
   operator forgot to declare): the wrist starts to fall, the velocity watchdog switches to
   the safe hold (gravity compensation plus damping) on that joint state, and the arm sinks
   slowly against the damping instead of falling;
7. tracking as in 5., the node told only a rough mass (IDENTIFY_GUESS_KG): it first finds
   the payload itself (~/identify_payload: poses it chooses, mass and centre of mass from
   the noisy efforts, applied), the arm goes back to the start, then tracks; the identified
   mass within IDENTIFIED_MASS_BOUND and the tracking RMS within IDENTIFIED_RMS_RATIO × the
   exact payload's (phase 5);
8. tracking as in 4. while a person pushes the forearm (PUSH_FORCE N at its end, by the
   wrist, for PUSH_SECONDS): the node estimates the push's joint torques from the noisy
   efforts, reports the collision (default thresholds) and holds the arm; estimate against
   the truth (sim_arm publishes the joint torques of the push) in a second plot.
Each phase ends with a verdict against what it must show (drift, tracking within
TRACKING_BOUND without a fault, no contact, or the safe hold; the push detected within
3/K_O + one period); the exit status is 1 if one does not.
The loop runs in lockstep: sim_arm advances one period only once the node's command for
the last state has arrived, and the node and the demo run on its simulated time (/clock,
use_sim_time), so a loaded machine makes the demo slower, never different. With
--free-running the simulation follows the wall clock as a real arm does (the result then
depends on the machine keeping up with --rate).
Prints the node's events, a table and writes a plot. Everything runs on the loopback in a
ROS domain of its own; the processes it starts are stopped when it ends, also on Ctrl-C.
"""

import argparse
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np

from ..paths import urdf_path
from .isolation import isolate

Q0 = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])             # rad, a non-trivial pose
AMPLITUDE = np.array([0.35, 0.25, 0.3, 0.4, 0.5, 0.6])      # rad
OMEGA = np.array([1.2, 1.5, 1.9, 2.2, 2.6, 3.0])            # rad/s
LEAD_IN = 0.5                                               # s before the trajectory starts
# the plant's, not in the URDF: each joint's rotor armature ≈ 10 % of its own inertia at Q0
# and friction of the order of that inertia × 1 rad/s² (the node's gains are accelerations
# scaled by its model's inertia: what they absorb shrinks with it, down to the light wrist)
ARMATURE = [0.2, 0.2, 0.08, 0.003, 0.0008, 0.00004]        # kg·m² (engine mujoco)
JOINT_DAMPING = [1.5, 1.5, 0.5, 0.015, 0.004, 0.0002]       # N·m·s/rad
JOINT_FRICTION = [1.5, 1.5, 0.5, 0.015, 0.004, 0.0002]      # N·m, Coulomb
EFFORT_NOISE = 0.5          # N·m: standard deviation of the simulated torque sensors
PUSH_FORCE = 30.0           # N, perpendicular to the forearm, at its end (by the wrist)
PUSH_SECONDS = 0.3
OBSERVER_GAIN = 50.0        # 1/s: the node's default observer_gain
IDENTIFY_GUESS_KG = 1.3     # the operator's rough guess of the 1 kg payload (30 % off)
IDENTIFY_GOAL = {"pose_count": 4, "move_time": 1.5, "settle_time": 0.5, "record_time": 0.5}
IDENTIFIED_MASS_BOUND = 0.05   # relative: what the identified mass must be within
IDENTIFIED_RMS_RATIO = 2.0     # tracking RMS after identification / with the exact payload
RETURN_SECONDS = 2.0           # s: back to Q0 after the identification's poses


def desired(t):
    """q_d = Q0 + A (1 − cos ωt) for t ≥ 0 (rest before), with its derivatives."""
    t = np.maximum(np.asarray(t, dtype=float), 0.0)[..., None]
    return (Q0 + AMPLITUDE * (1.0 - np.cos(OMEGA * t)), AMPLITUDE * OMEGA * np.sin(OMEGA * t),
            AMPLITUDE * OMEGA ** 2 * np.cos(OMEGA * t) * (t > 0))


class Phase:
    """payload_kg: a payload at the flange in the simulation; declared: the node knows it too
    (its start-up payload parameters); guess_kg: the node is told only this rough mass, then
    finds the payload itself (~/identify_payload) before tracking; friction: the node
    compensates the plant's joint friction (knowing its coefficients); expect: 'hold' when
    the safety envelope must abandon the motion for its safe hold, else 'track'."""

    def __init__(self, name, track, payload_kg=0.0, declared=False, friction=False,
                 expect="track", bound=None, push=False, guess_kg=None):
        self.name, self.track, self.payload_kg = name, track, payload_kg
        self.declared, self.friction, self.expect = declared, friction, expect
        self.push = push
        self.guess_kg = guess_kg      # declared roughly, then identified by the node
        self.bound = bound if bound is not None else (TRACKING_BOUND if track
                                                      else DRIFT_BOUND)


TRACKING_BOUND = 0.05      # rad: what the phases that track must stay within
UNCOMPENSATED_BOUND = 0.2  # rad: tracking with the plant's friction not compensated (below
                           # the node's max_tracking_error, 0.25 rad)
DRIFT_BOUND = 1e-3         # rad: gravity compensation with the exact model (a scheduling
                           # hiccup longer than the timeouts may let it move a little)
PHASES = [Phase("gravity compensation", False),
          Phase("gravity compensation, friction compensated", False, friction=True),
          Phase("computed torque", True, bound=UNCOMPENSATED_BOUND),
          Phase("computed torque, friction compensated", True, friction=True),
          Phase("computed torque, 1 kg payload declared", True, 1.0, declared=True,
                friction=True),
          Phase("gravity compensation, 1 kg unknown payload", False, 1.0, expect="hold"),
          Phase("computed torque, 1 kg payload identified by the node", True, 1.0,
                friction=True, guess_kg=IDENTIFY_GUESS_KG),
          Phase("computed torque, pushed on the forearm", True, friction=True, expect="hold",
                push=True)]


def start_processes(urdf, phase, rate, engine, lockstep):
    common = ["--ros-args", "--log-level", "warn", "-p", f"robot_description_file:={urdf}"]
    sim = [sys.executable, "-m", "robo_dynamics.ros.sim_arm_node", *common,
           "-p", f"initial_positions:={Q0.tolist()}", "-p", f"publish_rate:={rate}",
           "-p", "command_timeout:=0.1", "-p", f"engine:={engine}",
           "-p", "friction:=true", "-p", f"joint_damping:={JOINT_DAMPING}",
           "-p", f"joint_friction:={JOINT_FRICTION}", "-p", f"effort_noise:={EFFORT_NOISE}",
           "-r", "effort_commands:=/dynamics_node/commands"]
    if engine == "mujoco":
        sim += ["-p", f"armature:={ARMATURE}"]
    if lockstep:       # the simulation's time on /clock drives the node's, paused by the demo
        sim += ["-p", "lockstep:=true", "-p", "lockstep_supervised:=true",
                "-p", "lockstep_max_speed:=0.0", "-p", "lockstep_timeout:=0.5"]
    payload = ["-p", "payload_link:=tool0", "-p", f"payload_mass:={phase.payload_kg}"]
    node = [sys.executable, "-m", "robo_dynamics.ros.dynamics_node", *common,
            "-p", "marker_rate:=0.0", "-p", f"use_sim_time:={str(lockstep).lower()}"]
    if phase.payload_kg:
        sim += payload
    if phase.declared:
        node += payload
    if phase.guess_kg is not None:     # a rough mass at the flange, where the node will
        node += ["-p", "payload_link:=tool0", "-p", f"payload_mass:={phase.guess_kg}"]  # look
    if phase.friction:
        node += ["-p", "friction_compensation:=true", "-p", f"viscous_friction:={JOINT_DAMPING}",
                 "-p", f"coulomb_friction:={JOINT_FRICTION}"]
    return [subprocess.Popen(cmd) for cmd in (sim, node)]


def stop_processes(processes):
    """SIGINT (the nodes shut down cleanly), then SIGKILL whatever is left after 5 s."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
    for process in processes:
        try:
            process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def trajectory_from(names, q_measured, now, duration):
    """The desired motion as a JointTrajectory stamped `now`: from the measured pose (the
    node admits only a motion that starts where the arm is) a quintic blend to Q0 over
    LEAD_IN, then desired(t − LEAD_IN) sampled every 20 ms for `duration` + 1 s (beyond
    the recorded window, so the recording never sees the trajectory's end)."""
    rest = np.zeros(len(names))
    points = [(0.0, np.asarray(q_measured, dtype=float), rest, rest)]
    points += [(LEAD_IN + t, *desired(t)) for t in np.arange(0.0, duration + 1.0 + 1e-9, 0.02)]
    return trajectory_msg(names, now, points)


def trajectory_msg(names, now, points):
    """A JointTrajectory stamped `now` [s] through `points`: (time_from_start [s], q, q̇, q̈)."""
    import rclpy.duration
    import rclpy.time
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp = rclpy.time.Time(seconds=now).to_msg()
    for t, q, qd, qdd in points:
        msg.points.append(JointTrajectoryPoint(
            positions=np.asarray(q, dtype=float).tolist(), velocities=list(qd),
            accelerations=list(qdd),
            time_from_start=rclpy.duration.Duration(seconds=float(t)).to_msg()))
    return msg


class Supervisor:
    """The demo's side of the loop: a recorder of what the nodes publish, and the one who
    acts on them (desired motions, the identification goal, pushes). In lockstep it lets
    simulated time run only up to where it acts next (sim_arm's ~/run_until) and acts on
    the paused simulation, each action confirmed before time runs on: every action then
    happens at the same simulated instant on every machine. Deadlines on the wall clock
    only turn a hang into an error."""

    def __init__(self, phase, robot, rate, lockstep, processes):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from geometry_msgs.msg import WrenchStamped
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory
        from robo_dynamics_interfaces.msg import ContactState, ControllerEvent
        self.phase, self.robot, self.lockstep, self.processes = phase, robot, lockstep, processes
        self.period = 1.0 / rate
        self.names = list(robot.joint_names)
        # its own clock is the wall clock's (deadlines only): the simulation's time is the
        # stamp of the latest state, and a /clock subscription would cost it a callback per
        # state, taken from the loop
        node = self.node = rclpy.create_node("demo_supervisor")
        self.log = []          # (stamp [s], q, applied effort), one per simulated state
        self.answered = -1.0   # stamp [s] of the latest state the node answered
        self.contact, self.truth, self.events = [], [], []
        node.create_subscription(JointState, "/joint_states", self._on_state, 1000)
        if not lockstep:    # the node's answer to each state (lockstep: sim_arm's ~/paused)
            node.create_subscription(JointState, "/dynamics_node/gravity_torques",
                                     self._on_answer, 1000)
        node.create_subscription(
            ContactState, "/dynamics_node/contact_state",
            lambda m: self.contact.append((_stamp(m), np.array(m.levels),
                                           np.array(m.residuals),
                                           np.array(m.contact_thresholds))), 1000)
        node.create_subscription(JointState, "/sim_arm/external_joint_torques",
                                 lambda m: self.truth.append((_stamp(m),
                                                              self.in_order(m, m.effort))),
                                 1000)
        node.create_subscription(
            ControllerEvent, "/dynamics_node/events",
            lambda m: self.events.append((_stamp(m), m)),
            QoSProfile(depth=20, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.push_pub = node.create_publisher(WrenchStamped, "/sim_arm/external_wrench", 10)
        self.trajectory_pub = node.create_publisher(
            JointTrajectory, "/dynamics_node/desired_trajectory", 10)
        self.set_point_pub = node.create_publisher(JointState, "/dynamics_node/desired_state",
                                                   10)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.run_until_pub = node.create_publisher(Clock, "/sim_arm/run_until", latched)
        self.paused = -1.0     # [s] where the simulation holds (lockstep)
        node.create_subscription(Clock, "/sim_arm/paused", lambda m: setattr(
            self, "paused", m.clock.sec + 1e-9 * m.clock.nanosec), latched)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(node)

    def in_order(self, msg, values):
        """A JointState field in model joint order (joints are matched by name)."""
        if len(values) != len(msg.name):
            return np.full(len(self.names), np.nan)
        index = {name: i for i, name in enumerate(msg.name)}
        return np.array([values[index[name]] for name in self.names])

    def _on_state(self, msg):
        t = _stamp(msg)
        if self.log and t <= self.log[-1][0]:
            return                       # the same state again (lockstep: sent again)
        self.log.append((t, self.in_order(msg, msg.position), self.in_order(msg, msg.effort)))

    def _on_answer(self, msg):
        self.answered = max(self.answered, _stamp(msg))

    def spin_until(self, condition, what, seconds=120.0):
        deadline = time.monotonic() + seconds
        while not condition():
            self.executor.spin_once(timeout_sec=0.01)
            if time.monotonic() > deadline or any(p.poll() is not None
                                                  for p in self.processes):
                raise RuntimeError(f"phase '{self.phase.name}': "
                                   f"{what() if callable(what) else what}")

    def run_to(self, t, progress=None, recorded=True):
        """Let the loop run until simulated time t [s] (a multiple of the period) and the
        node has answered the state of that time; in lockstep the simulation then waits.
        recorded: that state has reached this node too (not before found())."""
        from rosgraph_msgs.msg import Clock
        import rclpy.time
        t = round(t / self.period) * self.period
        if self.lockstep:
            self.run_until_pub.publish(Clock(clock=rclpy.time.Time(seconds=t).to_msg()))
        shown = [-1]

        def reached():
            if progress is not None and int(self.now()) != shown[0]:
                shown[0] = int(self.now())
                progress(shown[0])
            held = self.paused >= t - 1e-6 if self.lockstep else self.answered >= t - 1e-6
            return held and (not recorded or self.now() >= t - 1e-6)
        self.spin_until(reached, lambda: (
            f"the loop stalled before t = {t:.3f} s (the latest state at {self.now():.3f}, "
            f"paused at {self.paused:.3f}, answered {self.answered:.3f})"),
            120.0 + 40.0 * max(t - self.now(), 0.0))
        return t

    def found(self):
        """Hold the simulation at its first state until every topic this node records has
        found its publisher (discovery, which a loaded machine slows down): the nodes'
        outputs then reach it from the first states on."""
        self.run_to(0.0, recorded=False)
        self.spin_until(lambda: all(s.get_publisher_count() > 0
                                    for s in self.node.subscriptions),
                        "the nodes' topics were not found")

    def flowing(self, t):
        """Wait until the node's outputs for the state at t [s] have arrived: what the
        node publishes is then recorded from t on (its publishers found this node)."""
        self.spin_until(lambda: (self.lockstep or self.answered >= t - 1e-6) and self.contact
                        and self.contact[-1][0] >= t - 1e-6,
                        f"the node's outputs for t = {t:.3f} s did not arrive (discovery did "
                        f"not complete within {t:g} s of simulated time)", 30.0)

    def now(self):
        """The simulation's time [s]: the stamp of the latest state (where a paused
        simulation stands; 0 before one)."""
        return self.log[-1][0] if self.log else 0.0

    def measured(self):
        return self.log[-1][1]

    def publish(self, publisher, msg):
        """Publish once the receiver is there (a message to nobody is lost)."""
        self.spin_until(lambda: publisher.get_subscription_count() > 0,
                        f"nobody takes {publisher.topic_name}")
        publisher.publish(msg)

    def desire(self, publisher, msg, what):
        """Send a desired motion; the node's answer (its event: tracking or refused)."""
        answered = len(self.events)
        self.publish(publisher, msg)
        self.spin_until(lambda: any(e.kind in ("tracking", "refused")
                                    for _, e in self.events[answered:]),
                        f"no answer to the {what}")
        return next(e for _, e in self.events[answered:] if e.kind in ("tracking", "refused"))

    def push(self, force):
        """Push the forearm with `force` [N] from now (0: stop), once sim_arm has it."""
        received = len(self.truth)
        at = self.now()
        self.publish(self.push_pub, forearm_push(self.robot, force))
        self.spin_until(lambda: any(abs(t - at) < 1e-6 for t, _ in self.truth[received:]),
                        "sim_arm did not take the push")

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()


def _stamp(msg):
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


START = 0.2          # s: the first pause (the node has been commanding for most of it, and
#                      its outputs reach the demo from then on)
HOLD_AT = 0.02       # s: where a phase that identifies first holds the pose


def run_phase(phase, urdf, rate, duration, progress, engine, lockstep):
    from .. import load_robot
    robot = load_robot(urdf)
    sup = Supervisor(phase, robot, rate, lockstep, [])     # there first: found at once
    identified = None
    try:
        sup.processes[:] = start_processes(urdf, phase, rate, engine, lockstep)
        if lockstep:
            sup.found()
        began = time.monotonic()
        if phase.guess_kg is not None:
            # hold where the arm is from the first states (told a wrong payload, the arm
            # would drift under gravity compensation), then the node finds the payload
            sup.run_to(HOLD_AT)
            from sensor_msgs.msg import JointState
            sup.desire(sup.set_point_pub, JointState(name=sup.names,
                                                     position=sup.measured().tolist()),
                       "set-point")
            sup.flowing(sup.run_to(START))
            identified = identify(sup, phase, progress)
            print()
            now = sup.now()
            event = sup.desire(sup.trajectory_pub,
                               move_to(sup.names, sup.measured(), Q0, now, RETURN_SECONDS),
                               "move back")
            if event.kind != "tracking":
                raise RuntimeError(f"phase '{phase.name}': {event.message}")
            sup.run_to(now + RETURN_SECONDS + 0.5)
        else:
            sup.flowing(sup.run_to(START))
        for attempt in range(3):
            now = sup.now()
            if not phase.track:
                break
            # as a supervisor would: send from the measured pose; if refused, re-send later
            event = sup.desire(sup.trajectory_pub,
                               trajectory_from(sup.names, sup.measured(), now, duration),
                               "trajectory")
            if event.kind == "tracking":
                break
            sup.run_to(now + 1.0)
        start = now + LEAD_IN
        sup.log[:] = sup.log[-1:]
        sup.contact.clear()
        push_at = LEAD_IN + 0.3 * duration if phase.push else None   # s after start
        report = lambda second: progress(f"  {phase.name}: {second - now:4.0f}/"
                                         f"{LEAD_IN + duration:.0f} s")
        if push_at is not None:
            sup.run_to(start + push_at, report)
            sup.push(PUSH_FORCE)
            sup.run_to(start + push_at + PUSH_SECONDS, report)
            sup.push(0.0)
        sup.run_to(start + duration, report)
        wall = time.monotonic() - began
    finally:
        stop_processes(sup.processes)
        sup.close()
    log, contact, truth, events = sup.log, sup.contact, sup.truth, sup.events
    stamps = np.array([entry[0] for entry in log]) - start
    keep = stamps >= 0.0
    observed = {"t": np.array([c[0] for c in contact]) - start,
                "levels": np.array([c[1] for c in contact]),
                "estimate": np.array([c[2] for c in contact]),
                "contact_threshold": contact[-1][3] if contact else None,
                "truth_t": np.array([c[0] for c in truth]) - start,
                "truth": np.array([c[1] for c in truth]), "push_at": push_at,
                "identified": identified, "wall": wall,
                "simulated": start + duration if lockstep else wall}
    return (stamps[keep], np.array([entry[1] for entry in log])[keep],
            np.array([entry[2] for entry in log])[keep],
            [(t - start, e) for t, e in events if e.kind not in ("started",)], observed)


def identify(sup, phase, progress):
    """The ~/identify_payload goal (poses the node chooses around the current one, apply),
    sent on the paused simulation: its Result once the node has moved through the poses,
    fitted and applied the payload (MODEL_CHANGE_DELAY after the last pose)."""
    from rclpy.action import ActionClient
    from robo_dynamics_interfaces.action import IdentifyPayload
    from ..control.identification_session import MODEL_CHANGE_DELAY
    client = ActionClient(sup.node, IdentifyPayload, "/dynamics_node/identify_payload")
    shown = [None]

    def show(message):
        f = message.feedback
        if (f.pose, f.phase) != shown[0]:       # a line per step, not per feedback
            shown[0] = (f.pose, f.phase)
            progress(f"  identifying the payload: pose {f.pose}/{f.poses}, {f.phase:<9}, "
                     f"{f.samples} states")
    try:
        sup.spin_until(lambda: client.server_is_ready(), "no ~/identify_payload action")
        answered, now = len(sup.events), sup.now()
        sent = client.send_goal_async(
            IdentifyPayload.Goal(link="tool0", apply=True, **IDENTIFY_GOAL),
            feedback_callback=show)
        sup.spin_until(sent.done, "the identification goal was not answered")
        if not sent.result().accepted:
            raise RuntimeError(f"phase '{phase.name}': the identification goal was rejected")
        result = sent.result().get_result_async()
        # the node plans on the paused simulation: its answer, then time runs
        sup.spin_until(lambda: result.done() or any(e.kind in ("tracking", "refused")
                                                    for _, e in sup.events[answered:]),
                       "the identification did not start")
        if not result.done():
            g = IDENTIFY_GOAL
            plan = g["pose_count"] * (g["move_time"] + g["settle_time"] + g["record_time"])
            sup.run_to(now + plan + MODEL_CHANGE_DELAY + 2 * sup.period)
            sup.spin_until(result.done, "the identification did not end", 600.0)
        return result.result().result
    finally:
        client.destroy()


def move_to(names, q_from, q_to, now, seconds):
    """A JointTrajectory stamped `now` from rest at q_from to rest at q_to in `seconds`."""
    rest = np.zeros(len(names))
    return trajectory_msg(names, now, [(0.0, q_from, rest, rest), (seconds, q_to, rest, rest)])


def forearm_push(robot, force):
    """The WrenchStamped that pushes the forearm at its end (the wrist 1 joint) with `force`
    [N] along the forearm frame's y axis (perpendicular to the forearm and to the elbow
    axis), as a wrench at the forearm's origin."""
    from geometry_msgs.msg import WrenchStamped
    msg = WrenchStamped()
    msg.header.frame_id = "forearm_link"
    end = np.asarray(robot.origin_translation[robot.body_links.index("forearm_link") + 1])
    f = np.array([0.0, force, 0.0])
    msg.wrench.force.y = force
    (msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z) = np.cross(end, f).tolist()
    return msg


def identification_verdict(phase, observed):
    """(as expected?, sentence) on the payload the node found (phases with guess_kg)."""
    result = observed["identified"]
    if not result.success:
        return False, f"NOT as expected: identification failed: {result.message}"
    error = abs(result.payload.m - phase.payload_kg) / phase.payload_kg
    ok = error <= IDENTIFIED_MASS_BOUND and result.applied
    com = result.payload.com
    return ok, (f"identified {result.payload.m:.4f} kg (truth {phase.payload_kg:g} kg, told "
                f"{phase.guess_kg:g} kg; error {100 * error:.1f} % "
                f"{'≤' if ok else '>'} {100 * IDENTIFIED_MASS_BOUND:g} %), centre of mass "
                f"({com.x:+.4f}, {com.y:+.4f}, {com.z:+.4f}) m in tool0 (truth 0), from "
                f"{result.samples} states; applied{', as expected' if ok else ''}")


def verdict(phase, summary, events):
    """(as expected?, sentence) for one phase."""
    holds = [at for at, event in events if event.kind == "safe_hold"]
    if phase.push:
        if holds:
            return True, f"safe hold at t = {holds[0]:+.2f} s, as expected"
        return False, "NOT as expected: the push did not lead to the safe hold"
    if phase.expect == "hold":
        if holds:
            return True, (f"safe hold at t = {holds[0]:+.2f} s; the arm then moves at "
                          f"≤ {summary['speed'].max():.3g} rad/s, and in the last second at "
                          f"{summary['sink'].max():.3g} rad/s (damping against the "
                          "unmodelled weight), as expected")
        return False, "NOT as expected: the watchdogs never abandoned the motion"
    if holds:
        return False, f"NOT as expected: safe hold at t = {holds[0]:+.2f} s"
    error, bound, what = ((summary["final"].max(), phase.bound, "drift") if not phase.track
                          else (summary["max"].max(), phase.bound, "max tracking error"))
    ok = error < bound
    return ok, (f"{what} {error:.2e} rad {'<' if ok else '>='} {bound:g} rad, "
                f"{'as expected' if ok else 'NOT as expected'}")


def contact_verdict(phase, observed, period):
    """(as expected?, sentence, figures) on the external-torque estimate of one phase: no
    contact without a push (the unknown payload is a real external load: not judged);
    with a push, the collision within 3/K_O + one period of the push, none before it."""
    t, levels, estimate = observed["t"], observed["levels"], observed["estimate"]
    if len(t) == 0:
        return False, "NOT as expected: no contact state received", {}
    threshold = observed["contact_threshold"]
    push = observed["push_at"]
    before = t < push if push is not None else np.ones(len(t), dtype=bool)
    figures = {"ratio": float(np.max(np.abs(estimate[before]) / threshold))}
    if phase.expect == "hold" and not phase.push:
        return True, (f"largest |τ̂|/contact threshold {figures['ratio']:.2f} (the unknown "
                      "payload is an external load)"), figures
    false = np.flatnonzero((levels[before] > 0).any(axis=1))
    if false.size:
        return False, (f"NOT as expected: contact reported at t = {t[before][false[0]]:+.3f}"
                       f" s without a push"), figures
    sentence = f"no contact (largest |τ̂|/contact threshold {figures['ratio']:.2f})"
    if push is None:
        return True, sentence, figures
    truth_t, truth = observed["truth_t"], observed["truth"]
    pushed = truth_t[np.flatnonzero(np.abs(truth).max(axis=1) > 0.0)] if len(truth) else []
    collided = t[np.flatnonzero((levels == 2).any(axis=1))]
    if not len(pushed) or not len(collided):
        return False, "NOT as expected: the push was not seen as a collision", figures
    start = pushed[0]          # sim_arm's receipt: the push acts from that state on
    bound = 3.0 / OBSERVER_GAIN + period
    figures["delay"] = float(collided[0] - start)
    ok = figures["delay"] <= bound
    sentence += (f" before the push; collision {1e3 * figures['delay']:.0f} ms after it "
                 f"{'≤' if ok else '>'} 3/K_O + one period = {1e3 * bound:.0f} ms")
    return ok, sentence + (", as expected" if ok else ", NOT as expected"), figures


def plot_payload(phase, result, path):
    """The payload the node found against the truth: mass and centre of mass (tool0's frame;
    the truth is at its origin), with ±3 standard deviations."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    com, std = result.payload.com, result.com_std
    fig, (ax_m, ax_c) = plt.subplots(1, 2, figsize=(9, 3.5),
                                     gridspec_kw={"width_ratios": [1, 3]})
    ax_m.bar([0, 1], [phase.payload_kg, result.payload.m], yerr=[0, 3 * result.mass_std],
             color=["0.7", "C0"], capsize=4)
    ax_m.axhline(phase.guess_kg, color="C3", ls="--", lw=0.8, label="told the node")
    ax_m.set_xticks([0, 1], ["truth", "identified"])
    ax_m.set_ylabel("mass [kg]")
    ax_m.legend(fontsize=7)
    x = np.arange(3)
    ax_c.bar(x - 0.2, np.zeros(3), 0.4, color="0.7", label="truth (0)")
    ax_c.bar(x + 0.2, 1e3 * np.array([com.x, com.y, com.z]), 0.4,
             yerr=3e3 * np.array([std.x, std.y, std.z]), color="C0", capsize=4,
             label="identified (±3σ)")
    ax_c.set_xticks(x, ["x", "y", "z"])
    ax_c.set_ylabel("centre of mass [mm], tool0")
    ax_c.legend(fontsize=7)
    fig.suptitle(f"payload identified by the node from {result.samples} noisy joint states "
                 "at poses it chose", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_external(observed, path):
    """Estimated (solid) against true (dashed) external joint torques around the push."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 4.5))
    push = observed["push_at"]
    window = (observed["t"] > push - 0.2) & (observed["t"] < push + PUSH_SECONDS + 0.4)
    in_truth = (observed["truth_t"] > push - 0.2) & (observed["truth_t"] < push + 0.7)
    for j in range(observed["estimate"].shape[1]):
        line, = ax.plot(observed["t"][window], observed["estimate"][window, j],
                        label=f"joint {j + 1}")
        if len(observed["truth"]):
            ax.plot(observed["truth_t"][in_truth], observed["truth"][in_truth, j], "--",
                    color=line.get_color(), linewidth=0.9)
    ax.axvspan(push, push + PUSH_SECONDS, color="0.9")
    ax.set_title(f"pushed with {PUSH_FORCE:g} N: external joint torques, estimated from "
                 f"noisy efforts (solid) vs true (dashed)")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("τ_ext [N m]")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def summarise(phase, t, q, tau, effort_limit):
    reference = desired(t)[0] if phase.track else np.broadcast_to(Q0, q.shape)
    error = reference - q
    return {"rms": np.sqrt(np.mean(error ** 2, axis=0)), "max": np.max(np.abs(error), axis=0),
            "final": np.abs(error[-1]), "peak": np.max(np.abs(tau), axis=0),
            "limit": effort_limit, "samples": len(t), "span": t[-1] - t[0] if len(t) else 0.0,
            "speed": (np.max(np.abs(np.diff(q, axis=0)) / np.diff(t)[:, None], axis=0)
                      if len(t) > 1 else np.zeros(q.shape[1])),
            "sink": (np.abs(q[-1] - q[t >= t[-1] - 1.0][0]) if len(t) > 1 and t[-1] > 1.0
                     else np.zeros(q.shape[1]))}


def print_table(results):
    print()
    print(f"{'phase':<44}{'joint':>6}{'rms err':>11}{'max err':>11}{'final err':>11}"
          f"{'peak |τ|':>11}{'limit':>8}{'use':>7}")
    print(f"{'':<44}{'':>6}{'[rad]':>11}{'[rad]':>11}{'[rad]':>11}{'[N m]':>11}{'[N m]':>8}"
          f"{'':>7}")
    for name, s in results.items():
        for j in range(len(s["rms"])):
            label = (name if j == 0 else f"  ({s['samples']} states, {s['span']:.1f} s)"
                     if j == 1 else "")
            print(f"{label:<44}{j + 1:>6}{s['rms'][j]:>11.2e}{s['max'][j]:>11.2e}"
                  f"{s['final'][j]:>11.2e}{s['peak'][j]:>11.2f}{s['limit'][j]:>8.0f}"
                  f"{100 * s['peak'][j] / s['limit'][j]:>6.1f}%")


def plot(records, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tracked = [(name, r) for name, r in records.items() if r[0]]
    fig, axes = plt.subplots(2, len(tracked), figsize=(7 * len(tracked), 8), squeeze=False)
    for col, (name, (_, t, q, tau)) in enumerate(tracked):
        q_d = desired(t)[0]
        for j in range(q.shape[1]):
            line, = axes[0, col].plot(t, q[:, j], label=f"joint {j + 1}")
            axes[0, col].plot(t, q_d[:, j], "--", color=line.get_color(), linewidth=0.8)
            axes[1, col].plot(t, tau[:, j], color=line.get_color(), label=f"joint {j + 1}")
        axes[0, col].set_title(f"{name}: actual (solid) vs desired (dashed)")
        axes[0, col].set_ylabel("position [rad]")
        axes[1, col].set_title("commanded torque (applied by sim_arm)")
        axes[1, col].set_ylabel("torque [N m]")
        axes[1, col].set_xlabel("time [s]")
        axes[0, col].legend(fontsize=7, ncol=3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=6.0, help="seconds per phase")
    parser.add_argument("--rate", type=float, default=500.0,
                        help="joint_states rate [Hz] (1000 runs too; 500 leaves headroom for "
                             "three processes on two cores)")
    parser.add_argument("--engine", choices=("mujoco", "internal"), default="mujoco",
                        help="sim_arm's engine (default: MuJoCo, independent of the node)")
    parser.add_argument("--free-running", action="store_true",
                        help="sim_arm follows the wall clock instead of the node's commands "
                             "(lockstep); the result then depends on the machine's load")
    parser.add_argument("--output", default="demo_output/closed_loop.png", help="plot path")
    parser.add_argument("--phases", default=None,
                        help="which phases to run, e.g. 7,8 (1-based; default: all)")
    args = parser.parse_args(argv)
    try:
        chosen = (range(1, len(PHASES) + 1) if args.phases is None
                  else sorted({int(k) for k in args.phases.split(",")}))
        selected = [PHASES[k - 1] for k in chosen if k >= 1]
    except (ValueError, IndexError):
        parser.error(f"--phases: comma-separated numbers from 1 to {len(PHASES)}")
    isolate()
    import rclpy
    from .. import load_robot
    urdf = urdf_path()
    robot = load_robot(urdf)
    print(f"closed loop on '{robot.name}' ({urdf}): sim_arm at {args.rate:.0f} Hz "
          + ("(free-running), " if args.free_running else "(lockstep, simulated time), ")
          + f"dynamics_node (pinocchio, cross-checked by rnea), {args.duration:.0f} s per phase; "
          f"ROS domain {os.environ['ROS_DOMAIN_ID']}, loopback only")
    print(f"plant: sim_arm engine {args.engine}"
          + (" (MuJoCo: shares no code with the node)" if args.engine == "mujoco" else
             " (the library itself: the node's own model)")
          + "; what the node's model does not have: joint damping "
          f"{JOINT_DAMPING} N·m·s/rad and Coulomb friction {JOINT_FRICTION} N·m (compensated "
          "in the phases that say so)"
          + (f", rotor armature {ARMATURE} kg·m²" if args.engine == "mujoco" else "")
          + "; no obstacle")
    rclpy.init()
    records, results, failed, contacts, pushed = {}, {}, 0, {}, None
    simulated = wall = 0.0         # s: simulated time and the wall time it took
    identified_result = None
    try:
        for phase in selected:
            print(f"phase: {phase.name}", flush=True)
            t, q, tau, events, observed = run_phase(
                phase, urdf, args.rate, args.duration,
                lambda text: print(text, end="\r", flush=True), args.engine,
                not args.free_running)
            simulated += observed["simulated"]
            wall += observed["wall"]
            print()
            for at, event in events:
                print(f"  event at t = {at:+.2f} s ({event.kind}): {event.message}")
            records[phase.name] = (phase.track, t, q, tau)
            results[phase.name] = summarise(phase, t, q, tau, robot.effort_limit)
            ok, sentence = verdict(phase, results[phase.name], events)
            seen, contact_sentence, figures = contact_verdict(phase, observed, 1.0 / args.rate)
            contacts[phase.name] = figures
            failed += not (ok and seen)
            print(f"  verdict: {sentence}")
            print(f"  external torques: {contact_sentence}")
            if phase.guess_kg is not None:
                identified_result = observed["identified"]
                found, sentence = identification_verdict(phase, observed)
                failed += not found
                print(f"  identification: {sentence}")
            if phase.push:
                pushed = observed
    except KeyboardInterrupt:
        print("\ninterrupted: processes stopped")
        return 130
    finally:
        rclpy.try_shutdown()
    print_table(results)
    print(f"\nreal-time factor {simulated / wall:.2f}: {simulated:.1f} s simulated in "
          f"{wall:.1f} s of wall time (the loop's, start-up and plots apart)")
    failed += summary(results, contacts, args.engine)
    identified = [p for p in selected if p.guess_kg is not None]
    path = pathlib.Path(args.output).resolve()
    plot(records, path)
    print(f"plot: {path}")
    if identified_result is not None and identified_result.success:
        payload_plot = path.with_name(path.stem + "_payload.png")
        plot_payload(identified[0], identified_result, payload_plot)
        print(f"plot: {payload_plot}")
    if pushed is not None and len(pushed["t"]):
        external = path.with_name(path.stem + "_external_torques.png")
        plot_external(pushed, external)
        print(f"plot: {external}")
    if failed:
        print(f"{failed} phase(s) NOT as expected")
    return 1 if failed else 0


def summary(results, contacts, engine):
    """Print the lines that compare phases (those whose phases ran); the number of
    comparisons NOT as expected."""
    failed = 0
    names = [p.name for p in PHASES]
    if names[0] in results:
        drift = results[names[0]]["final"].max()
        print(f"\ngravity compensation: drift after {results[names[0]]['span']:.1f} s = "
              f"{drift:.2e} rad (max over joints)")
    if all(name in results for name in names[:4]):
        (g_off, g_on), (t_off, t_on) = ([results[p.name] for p in PHASES
                                         if p.track == track][:2] for track in (False, True))
        print(f"friction compensation off → on (plant: engine {engine}): drift "
              f"{g_off['final'].max():.2e} → {g_on['final'].max():.2e} rad; computed torque "
              f"max error {t_off['max'].max():.2e} → {t_on['max'].max():.2e} rad, RMS (worst "
              f"joint) {t_off['rms'].max():.2e} → {t_on['rms'].max():.2e} rad")
    identified = [p for p in PHASES if p.guess_kg is not None and p.name in results]
    if identified and "computed torque, 1 kg payload declared" in results:
        exact = results["computed torque, 1 kg payload declared"]["rms"].max()
        after = results[identified[0].name]["rms"].max()
        ok = after <= IDENTIFIED_RMS_RATIO * exact
        failed += not ok
        print(f"payload identified by the node: tracking RMS (worst joint) {after:.2e} rad "
              f"against {exact:.2e} rad with the payload declared exactly: "
              f"{after / exact:.2f}× {'≤' if ok else '>'} {IDENTIFIED_RMS_RATIO:g}×"
              + ("" if ok else ", NOT as expected"))
    if len(results) == len(PHASES):
        quiet = [f["ratio"] for p in PHASES if p.expect != "hold" and (f := contacts[p.name])]
        push = contacts[PHASES[-1].name]
        print(f"external torques (effort noise {EFFORT_NOISE} N·m, observer gain "
              f"{OBSERVER_GAIN:g}/s): no contact while tracking or holding at the default "
              f"thresholds (largest |τ̂| = {max(quiet):.2f} × the contact threshold); pushed "
              f"with {PUSH_FORCE:g} N, collision after "
              f"{1e3 * push.get('delay', float('nan')):.0f} ms")
    return failed


if __name__ == "__main__":
    sys.exit(main())
