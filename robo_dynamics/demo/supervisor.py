"""The demo's processes and its supervisor: sim_arm and dynamics_node started per phase,
a node that records what they publish and acts on the loop on a paused simulation."""

import itertools
import os
import subprocess

import numpy as np

from ..ros.processes import node_command, spin_until
from .scenario import (ARMATURE, DRIVE_ARMATURE, EFFORT_NOISE, IDENTIFY_ARM_KD, IDENTIFY_ARM_KP,
                       JOINT_DAMPING, JOINT_FRICTION, LEAD_IN, Q0, TIP_STIFFNESS, desired)

SUPERVISORS = itertools.count(1)     # the supervisors' node names: one each
ASKS, ASK_SECONDS = 24, 5.0          # found(): the parameter query, asked again while dropped


def node_environment():
    """The environment of the processes a phase starts: this one's, but rclpy's warning of a
    dropped service response is not printed. found() asks dynamics_node for a parameter
    while discovery is still under way, on purpose: the answers that get lost are its
    signal to ask again, not a fault of the node."""
    dropped = "ignore:failed to send response:RuntimeWarning"
    given = os.environ.get("PYTHONWARNINGS")
    return {**os.environ, "PYTHONWARNINGS": f"{given},{dropped}" if given else dropped}


def start_processes(urdf, phase, rate, engine, lockstep, plant_urdf=None, hold_expected=False,
                    sim_extra=(), node_extra=()):
    """(sim_arm, dynamics_node) for `phase`, the node's model from `urdf`, sim_arm's from
    plant_urdf (None: the same), with more arguments each (sim_extra, node_extra). Both log
    warnings and errors, but for hold_expected (the safe hold is the run's story: the
    supervisor prints its event and the verdict judges it) dynamics_node logs fatal errors
    only."""
    common = ["--log-level", "warn"]
    sim = [*node_command("sim_arm", *common),
           "-p", f"robot_description_file:={plant_urdf or urdf}",
           "-p", f"initial_positions:={Q0.tolist()}", "-p", f"publish_rate:={rate}",
           "-p", "command_timeout:=0.1", "-p", f"engine:={engine}",
           "-p", "friction:=true", "-p", f"joint_damping:={JOINT_DAMPING}",
           "-p", f"joint_friction:={JOINT_FRICTION}", "-p", f"effort_noise:={EFFORT_NOISE}",
           "-r", "effort_commands:=/dynamics_node/commands"]
    if engine == "mujoco":
        sim += ["-p", f"armature:={DRIVE_ARMATURE if phase.whole_arm else ARMATURE}"]
    if lockstep:       # the simulation's time on /clock drives the node's, paused by the demo
        sim += ["-p", "lockstep:=true", "-p", "lockstep_supervised:=true",
                "-p", "lockstep_max_speed:=0.0", "-p", "lockstep_timeout:=0.5"]
    payload = ["-p", "payload_link:=tool0", "-p", f"payload_mass:={phase.payload_kg}"]
    node = [*node_command("dynamics_node", "--log-level", "fatal" if hold_expected else "warn"),
            "-p", f"robot_description_file:={urdf}",
            "-p", "marker_rate:=0.0", "-p", f"use_sim_time:={str(lockstep).lower()}"]
    if phase.payload_kg:
        sim += payload
    if phase.declared:
        node += payload
    if phase.guess_kg is not None:     # a rough mass at the flange, where the node will
        node += ["-p", "payload_link:=tool0", "-p", f"payload_mass:={phase.guess_kg}"]  # look
    if phase.whole_arm and engine == "mujoco":     # the drives' datasheet
        node += ["-p", f"armature:={DRIVE_ARMATURE}"]
    if phase.whole_arm:      # a model this far off looks like a push to the observer, and
        node += ["-p", "collision_reaction:=none",    # stiffer gains track the excitation
                 "-p", f"kp:={[IDENTIFY_ARM_KP]}", "-p", f"kd:={[IDENTIFY_ARM_KD]}"]
    if phase.cartesian:      # at the default collision_reaction (hold): the push at the tip
        node += ["-p", f"cartesian.stiffness:={TIP_STIFFNESS}"]   # is one the mode yields to
    if phase.friction:
        node += ["-p", "friction_compensation:=true", "-p", f"viscous_friction:={JOINT_DAMPING}",
                 "-p", f"coulomb_friction:={JOINT_FRICTION}"]
    return [subprocess.Popen(cmd, env=node_environment())
            for cmd in (sim + list(sim_extra), node + list(node_extra))]


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
        from geometry_msgs.msg import PoseStamped, WrenchStamped
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
        # a name of its own: rcl's rosout keeps a node name's publisher registered until
        # every node of that name is gone, and warns when a second one comes
        node = self.node = rclpy.create_node(f"demo_supervisor_{next(SUPERVISORS)}")
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
        self.pose_pub = node.create_publisher(PoseStamped, "/dynamics_node/target_pose", 10)
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
        """Spin until condition() holds; RuntimeError naming `what` (a sentence, or a
        function giving it) if a process dies or `seconds` of wall time pass first."""
        if not spin_until(self.executor, condition, seconds, self.processes):
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

    def found(self, dynamics_node=True, publishers=()):
        """Hold the simulation at its first state until every topic this node records has
        found its publisher, every topic it sends (and `publishers`) its subscriber, and
        the dynamics node this node's subscriptions (without one: sim_arm's topics only;
        discovery, which a loaded machine slows down; the node publishes an output only
        once it sees a subscriber): the nodes' outputs then reach it from the first
        states on, and what it sends later arrives at once. The last is
        seen in an answer of the node's parameter service: it reaches this node only once
        the node has taken this node's subscriptions, announced before the client's
        (discovery data arrives in order)."""
        from rcl_interfaces.srv import GetParameters
        self.run_to(0.0, recorded=False)
        node_topic = lambda entity: entity.topic_name.startswith("/dynamics_node/")  # noqa
        self.spin_until(lambda: all(s.get_publisher_count() > 0
                                    for s in self.node.subscriptions
                                    if dynamics_node or not node_topic(s)),
                        "the nodes' topics were not found")
        # and the nodes this node's topics (at a later pause, a motion or a push sent to a
        # subscriber not yet found would wait for discovery with the clock standing)
        sent = (self.push_pub, *publishers) + ((self.trajectory_pub, self.set_point_pub,
                                               self.pose_pub) if dynamics_node else ())
        self.spin_until(lambda: all(p.get_subscription_count() > 0 for p in sent),
                        "the nodes did not find this node's topics")
        if not dynamics_node:
            return
        client = self.node.create_client(GetParameters, "/dynamics_node/get_parameters")
        try:
            self.spin_until(client.service_is_ready, "dynamics_node's parameters not found")
            for _ in range(ASKS):
                # Fast DDS drops a response to a client whose reader the node has not yet
                # matched (the node logs "failed to send response": ros2/rmw_fastrtps#842):
                # discovery is still under way, which is what this waits for; ask again
                answer = client.call_async(GetParameters.Request(names=["kp"]))
                if spin_until(self.executor, answer.done, ASK_SECONDS, self.processes):
                    break
                client.remove_pending_request(answer)
            self.spin_until(answer.done, "dynamics_node did not answer", ASK_SECONDS)
        finally:
            self.node.destroy_client(client)

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

    def push(self, wrench):
        """Apply the WrenchStamped `wrench` from now (a zero wrench: stop), once sim_arm has
        it."""
        received = len(self.truth)
        at = self.now()
        self.publish(self.push_pub, wrench)
        self.spin_until(lambda: any(abs(t - at) < 1e-6 for t, _ in self.truth[received:]),
                        "sim_arm did not take the push")

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()


def _stamp(msg):
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
