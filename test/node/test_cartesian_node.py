"""The Cartesian targets over ROS 2: dynamics_node holds the tip of the UR5e simulated by
MuJoCo (sim_arm, lockstep on simulated time) at a ~/target_pose by Cartesian impedance; a
force on the tip displaces it by K⁻¹F and it springs back when the force ends; a far target
is approached at the clipped error; bad targets are refused with their reason, and the arm
stays held."""

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import PoseStamped, WrenchStamped
from std_msgs.msg import Float64MultiArray
from visualization_msgs.msg import MarkerArray

import robo_dynamics as rd
from robo_dynamics.control.cartesian import rotation_vector
from robo_dynamics.ros.dynamics_node.markers import quaternion_from_matrix
from robo_dynamics_interfaces.msg import ControllerEvent
from ros_harness import Loop, closed_loop_nodes, overrides
from conftest import SHIPPED

URDF = str(SHIPPED / "rd_ur5e.urdf")
ROBOT = rd.load_robot(URDF)
PINOCCHIO = rd.make_solver(ROBOT, "pinocchio")
Q0 = [-0.5, -1.6, 1.0, -1.2, -1.0, 0.0]
K = [500.0, 400.0, 600.0, 2.0, 2.0, 2.0]


@pytest.fixture(scope="module")
def loop(ros):
    sim, node = closed_loop_nodes(URDF, Q0, {"engine": "mujoco", "lockstep_max_speed": 0.0}, {
        "collision_reaction": "none",
        # the URDF's wrist 3 (no rotor inertia) is light: a 0.5 rad error spins it beyond
        # the velocity bound on its way back (docs/cartesian.md)
        "cartesian.max_orientation_error": 0.05})
    closed = Targets(sim, node)
    assert closed.spin_until(lambda: node.controller is not None and node.controller.running,
                             timeout=60.0)
    closed.wait(0.2)
    closed.hold_here()
    yield closed
    closed.close()


class Targets(Loop):
    def __init__(self, sim, node):
        super().__init__(sim, node)
        self.sim, self.node = sim, node
        self.peer = self.add(rclpy.create_node("cartesian_client"))
        self.pose = self.peer.create_publisher(PoseStamped, "/dynamics_node/target_pose", 10)
        self.stiffness = self.peer.create_publisher(Float64MultiArray,
                                                    "/dynamics_node/target_stiffness", 10)
        self.push = self.peer.create_publisher(WrenchStamped, "/sim_arm/external_wrench", 10)
        self.events = []
        self.peer.create_subscription(ControllerEvent, "/dynamics_node/events",
                                      self.events.append, 100)
        assert self.spin_until(lambda: all(p.get_subscription_count() > 0 for p in (
            self.pose, self.stiffness, self.push)))

    def now(self):
        return self.node.get_clock().now().nanoseconds * 1e-9

    def wait(self, seconds):
        """Spin until `seconds` of simulated time have passed."""
        end = self.now() + seconds
        assert self.spin_until(lambda: self.now() >= end, timeout=120.0)

    def tip(self):
        return PINOCCHIO.tip_pose(self.sim.arm.q.copy())

    def event_after(self, count):
        """The first event after the first `count` ones."""
        assert self.spin_until(lambda: len(self.events) > count, timeout=30.0)
        return self.events[count]

    def send_pose(self, R, p, frame="base_link"):
        msg = PoseStamped()
        msg.header.frame_id = frame
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(x) for x in p)
        msg.pose.orientation = quaternion_from_matrix(R)
        count = len(self.events)
        self.pose.publish(msg)
        return count

    def admitted(self, p):
        """Spin until the node tracks a target at p [m] (a new pose in the same mode has no
        event: the node's own target is read)."""
        assert self.spin_until(lambda: np.allclose(getattr(
            self.node.controller.motion, "p_d", np.full(3, np.nan)), p, atol=1e-12),
            timeout=30.0), "the target pose was not admitted"

    def hold_here(self):
        self.stiffness.publish(Float64MultiArray(data=K))
        R, p = self.tip()
        event = self.event_after(self.send_pose(R, p))
        assert (event.kind, event.mode) == ("tracking", "cartesian_impedance"), event.message

    def markers(self):
        """{(namespace, id): Marker} of the first ~/markers message with the Cartesian
        markers, drawn at 20 Hz (the markers off again after it)."""
        def drawn_cartesian(msg):
            return any(m.ns == "cartesian_wrench" for m in msg.markers)

        inbox = []
        sub = self.peer.create_subscription(MarkerArray, "/dynamics_node/markers",
                                            inbox.append, 10)
        try:
            assert self.node.set_parameters(overrides({"marker_rate": 20.0}))[0].successful
            assert self.spin_until(lambda: any(map(drawn_cartesian, inbox)),
                                   timeout=60.0)
        finally:
            self.node.set_parameters(overrides({"marker_rate": 0.0}))
            self.peer.destroy_subscription(sub)
        drawn = next(filter(drawn_cartesian, inbox))
        return {(m.ns, m.id): m for m in drawn.markers}

    def push_tip(self, force, R):
        msg = WrenchStamped()
        msg.header.frame_id = ROBOT.tip_link
        f = R.T @ np.asarray(force, dtype=float)      # the tip's axes
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(x) for x in f)
        self.push.publish(msg)


def test_a_tip_force_displaces_the_held_tip_by_the_compliance_and_it_springs_back(loop):
    loop.wait(0.5)
    R0, p0 = loop.tip()
    F = np.array([8.0, -6.0, 5.0])
    loop.push_tip(F, R0)
    loop.wait(3.0)          # settled to 0.07 % of K⁻¹F and 0.2 mrad (each mode's decay)
    assert loop.node.controller.mode == "cartesian_impedance"
    R, p = loop.tip()
    np.testing.assert_allclose(p - p0, F / np.array(K[:3]), rtol=0.05)
    assert np.linalg.norm(rotation_vector(R @ R0.T)) < 0.01
    # rviz2: the target frame at the target, the stiffness ellipsoid (semi-axes ∝ K's
    # eigenvalues), and the wrench the law commands: at rest the spring balances the push
    # sizes from the arm (docs/node.md, "In rviz2"): rd_ur5e's DH offsets and published
    # link masses, the default cartesian.max_stiffness (3000 N/m)
    reach = 0.1625 + 0.425 + 0.3922 + 0.1333 + 0.0997 + 0.0996          # m
    mass = 3.761 + 8.058 + 2.846 + 1.37 + 1.3 + 0.365                    # kg
    drawn = loop.markers()
    target = [drawn["cartesian_target", i] for i in range(3)]
    for i, arrow in enumerate(target):
        start, end = (np.array([a.x, a.y, a.z]) for a in arrow.points)
        np.testing.assert_allclose(start, p0, atol=1e-9)
        np.testing.assert_allclose(end - start, reach / 8.0 * R0[:, i], atol=1e-9)
    ellipsoid = drawn["stiffness_ellipsoid", 0]
    np.testing.assert_allclose(sorted([ellipsoid.scale.x, ellipsoid.scale.y, ellipsoid.scale.z]),
                               2 * 0.25 * reach / 3000.0 * np.sort(K[:3]), rtol=1e-9)
    start, end = (np.array([a.x, a.y, a.z]) for a in drawn["cartesian_wrench", 0].points)
    np.testing.assert_allclose(start, p, atol=1e-3)
    np.testing.assert_allclose((end - start) / (0.5 * reach / (mass * 9.81)), -F,
                               atol=0.05 * np.linalg.norm(F))
    loop.push_tip(np.zeros(3), R0)
    loop.wait(2.0)          # back to 0.03 mm
    assert np.linalg.norm(loop.tip()[1] - p0) < 1e-3


@pytest.mark.parametrize("bad, words", [
    ("frame", "frame_id 'world_x': expected 'base_link', 'tool0' or a link of the chain"),
    ("quaternion", "unit quaternion"),
    ("five stiffness values", "6 or 36 values, got 5"),
    ("a NaN stiffness", "value 3 is nan: every value must be finite"),
    ("too stiff", "too high for the control period 2 ms"),
    ("beyond max_stiffness", "[N/m, N·m/rad] beyond cartesian.max_stiffness"),
])
def test_a_bad_target_is_refused_with_its_reason_and_the_tip_stays_held(loop, bad, words):
    R0, p0 = loop.tip()
    count = len(loop.events)
    if bad == "frame":
        loop.send_pose(R0, p0, frame="world_x")
    elif bad == "quaternion":
        msg = PoseStamped()
        msg.header.frame_id = "base_link"
        msg.pose.orientation.w = 0.0                 # all zeros (w defaults to 1)
        loop.pose.publish(msg)
    else:
        data = {"five stiffness values": [500.0] * 5,
                "a NaN stiffness": [500.0, 500.0, 500.0, float("nan"), 2.0, 2.0],
                "too stiff": [500.0, 500.0, 500.0, 60.0, 60.0, 60.0],
                "beyond max_stiffness": [5000.0, 500.0, 500.0, 2.0, 2.0, 2.0]}[bad]
        loop.stiffness.publish(Float64MultiArray(data=data))
    event = loop.event_after(count)
    assert event.kind == "refused" and words in event.message, event.message
    assert event.mode == "cartesian_impedance"
    loop.wait(0.5)
    assert np.linalg.norm(loop.tip()[1] - p0) < 1e-3


def test_a_target_in_a_link_frame_is_placed_where_that_link_is(loop):
    """frame_id forearm_link: 2 cm along the forearm's x axis from the tip, in the forearm's
    frame (its pose from Pinocchio's own kinematics of the URDF); the tip goes there."""
    import pinocchio as pin
    model = pin.buildModelFromUrdf(URDF)
    data = model.createData()
    q = loop.sim.arm.q.copy()
    pin.framesForwardKinematics(model, data, q)
    forearm = data.oMf[model.getFrameId("forearm_link")]
    R0, p0 = loop.tip()
    R_f, p_f = forearm.rotation, forearm.translation
    p_d = p0 + 0.02 * R_f[:, 0]
    count = loop.send_pose(R_f.T @ R0, R_f.T @ (p_d - p_f), "forearm_link")
    loop.wait(2.5)            # admitted: no event (the mode is the same), a refusal has one;
                              # there to 0.03 mm and 1 mrad by then
    assert len(loop.events) == count, [e.message for e in loop.events[count:]]
    R, p = loop.tip()
    assert np.linalg.norm(p - p_d) < 1e-3
    assert np.linalg.norm(rotation_vector(R @ R0.T)) < 0.01
    loop.send_pose(R0, p0)
    loop.wait(2.5)            # back to 0.03 mm
    assert np.linalg.norm(loop.tip()[1] - p0) < 1e-3


def test_operational_space_over_ros_moves_the_tip_as_a_mass_spring_damper(loop):
    """cartesian.law operational_space, K = 100/s² (~/target_stiffness), ζ = 0.3: a 2 cm step
    along base x follows ë + 2ζω ė + ω² e = 0 (ω = 10 rad/s) on MuJoCo's arm through the node
    at 500 Hz: ζ from the first two extrema within 10 %, the damped frequency within 5 %,
    the other axes within 5 % of the step. Then back to Cartesian impedance."""
    assert loop.node.set_parameters(overrides({"cartesian.law": "operational_space",
                                               "cartesian.damping_ratio": 0.3}))[0].successful
    try:
        R0, p0 = loop.tip()
        count = len(loop.events)
        loop.stiffness.publish(Float64MultiArray(data=[100.0] * 6))
        event = loop.event_after(count)
        assert (event.kind, event.mode) == ("tracking", "operational_space"), event.message
        p_d = p0 + np.array([0.02, 0.0, 0.0])
        # 1.5 s from the step's admission (the loop runs on while the target is on its way:
        # under load a window from the send could pass before the node has the step)
        loop.send_pose(R0, p_d)
        loop.admitted(p_d)
        end, samples = loop.now() + 1.5, {}

        def sample():
            samples[loop.now()] = loop.tip()[1] - p_d
            return loop.now() >= end
        assert loop.spin_until(sample, timeout=120.0)
        t = np.array(sorted(samples))
        e = np.array([samples[k] for k in t])
        z = e[:, 0]
        turns = [k for k in range(1, len(z) - 1) if (z[k] - z[k - 1]) * (z[k + 1] - z[k]) < 0]
        r = np.log(abs(z[turns[1]] / z[turns[0]]))
        assert -r / np.sqrt(np.pi ** 2 + r ** 2) == pytest.approx(0.3, rel=0.10)
        assert np.pi / (t[turns[1]] - t[turns[0]]) == pytest.approx(10.0 * np.sqrt(0.91),
                                                                    rel=0.05)
        assert np.abs(e[:, 1:]).max() < 0.05 * 0.02
    finally:
        assert loop.node.set_parameters(overrides({"cartesian.law": "cartesian_impedance",
                                                   "cartesian.damping_ratio": 1.0}))[0] \
            .successful
    count = len(loop.events)       # the stiffness first: 100 N·m/rad is too stiff for the
    loop.stiffness.publish(Float64MultiArray(data=K))       # impedance law's rotation
    assert loop.event_after(count).mode == "cartesian_impedance"
    loop.send_pose(R0, p0)
    loop.wait(2.5)            # back to 0.03 mm
    assert loop.node.controller.mode == "cartesian_impedance"
    assert np.linalg.norm(loop.tip()[1] - p0) < 1e-3


def test_a_far_target_is_approached_at_the_clipped_error_not_as_a_step(loop):
    """1 m away, the error clipped to e_c = 2 cm: the tip is pulled by at most K e_c, and its
    speed stays below e_c √(K_max / m_min), what a spring stretched by e_c gives the lightest
    mass the tip's translation has (its rotation free: m_min = 1 / λ_max((Λ⁻¹)_tt)); unclipped
    that would be 50 times as fast. The target then comes back to where it was."""
    assert loop.node.set_parameters(overrides({"cartesian.max_position_error": 0.02}))[0] \
        .successful
    R0, p0 = loop.tip()
    speeds = []
    loop.send_pose(R0, p0 + np.array([0.0, 0.6, 0.8]))
    loop.admitted(p0 + np.array([0.0, 0.6, 0.8]))
    end = loop.now() + 1.0
    last = [loop.now(), p0]

    def sample():
        t, p = loop.now(), loop.tip()[1]
        if t > last[0]:
            speeds.append(np.linalg.norm(p - last[1]) / (t - last[0]))
            last[:] = [t, p]
        return t >= end

    assert loop.spin_until(sample, timeout=120.0)
    assert loop.node.controller.mode == "cartesian_impedance"
    moved = np.linalg.norm(loop.tip()[1] - p0)
    Lambda = PINOCCHIO.operational_space_inertia(loop.sim.arm.q)
    m_min = 1.0 / np.linalg.eigvalsh(np.linalg.inv(Lambda)[:3, :3])[-1]
    bound = 0.02 * np.sqrt(max(K[:3]) / m_min)
    assert 0.02 < moved and max(speeds) < bound, (moved, max(speeds), bound)
    loop.send_pose(R0, p0)
    loop.wait(3.0)            # back to 0.04 mm
    assert np.linalg.norm(loop.tip()[1] - p0) < 2e-3
    assert loop.node.set_parameters(overrides({"cartesian.max_position_error": 0.1}))[0] \
        .successful
