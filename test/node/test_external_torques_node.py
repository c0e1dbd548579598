"""The external-torque outputs of the dynamics node over ROS 2: a known wrench at the tip of
an arm at rest, measured as the motor torques that hold it (g − Jᵀ F), comes back as τ_ext
(against Pinocchio's inverse dynamics with that wrench), as the tip wrench, as contact
levels against the thresholds, as a collision that holds the arm until ~/reset_observer;
thresholds change at run time; a joint without effort has no estimate."""

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

import robo_dynamics as rd
from robo_dynamics.control.momentum_observer import DEFAULT_THRESHOLDS
from robo_dynamics_interfaces.msg import ContactState
from robo_dynamics_interfaces.srv import SetContactThresholds
import ros_harness
from conftest import SHIPPED

URDF = str(SHIPPED / "rd_ur5e.urdf")
ROBOT = rd.load_robot(URDF)
NAMES = list(ROBOT.joint_names)
N = ROBOT.dof
REF = rd.make_solver(ROBOT, "pinocchio")
Q = np.array([0.3, -1.1, 1.4, -0.9, 1.2, 0.4])
WRENCH = np.array([10.0, -15.0, -40.0, 0.5, -1.0, 0.8])   # environment on the tip, base axes
TAU_EXT = REF.inverse_dynamics(Q, np.zeros(N), np.zeros(N), WRENCH) - REF.gravity(Q)
HOLDING = REF.gravity(Q) - TAU_EXT        # what the motors measure holding the arm still


@pytest.fixture(scope="module", autouse=True)
def ros_context(ros):
    yield


class Harness(ros_harness.Harness):
    """The node on rd_ur5e at rest at Q. The peer's states are stamped one second apart
    (the harness identifies outputs by stamp), and some are dropped on the way: a long
    stale_timeout keeps them one stream for the observer."""

    def __init__(self, **params):
        params.setdefault("robot_description_file", URDF)
        params.setdefault("stale_timeout", 1e6)
        params.setdefault("wrench_damping", 0.0)
        super().__init__(default_state=(NAMES, Q, np.zeros(N)), **params)
        name = self.node.get_fully_qualified_name()
        for key, kind, topic in (("external", JointState, "external_joint_torques"),
                                 ("external_wrench", WrenchStamped, "external_wrench"),
                                 ("contact", ContactState, "contact_state")):
            self.inbox[key] = []
            self.peer.create_subscription(kind, f"{name}/{topic}",
                                          lambda m, key=key: self.inbox[key].append(m), 1000)

    def hold_still(self, key, predicate, effort=HOLDING, names=NAMES):
        """Publish the arm at rest at Q with `effort` until the last `key` message passes."""
        q = [Q[NAMES.index(name)] for name in names]
        sequence, start = self.sequence + 1, len(self.inbox[key])

        def met():
            fresh = [m for m in self.inbox[key][start:] if m.header.stamp.sec >= sequence]
            return fresh and predicate(fresh[-1])
        assert self.spin_until(met, action=lambda: self.publish_state(
            names, q, np.zeros(len(names)), effort)), f"{key}: {self.inbox[key][-1:]}"
        return self.inbox[key][-1]

    def events(self, kind):
        return [e for e in self.inbox["events"] if e.kind == kind]


@pytest.fixture
def harness(request):
    h = Harness(**getattr(request, "param", {}))
    yield h
    h.close()


def close_to(expected, tolerance):
    return lambda values: np.abs(np.asarray(values) - expected).max() <= tolerance


def test_external_torques_and_tip_wrench_of_a_known_wrench(harness):
    msg = harness.hold_still("external", lambda m: close_to(TAU_EXT, 1e-6)(m.effort))
    assert list(msg.name) == NAMES
    wrench = harness.hold_still("external_wrench", lambda m: True).wrench
    F = [wrench.force.x, wrench.force.y, wrench.force.z,
         wrench.torque.x, wrench.torque.y, wrench.torque.z]
    np.testing.assert_allclose(F, WRENCH, rtol=0, atol=1e-5)
    assert harness.inbox["external_wrench"][-1].header.frame_id == ROBOT.base_link


def test_a_collision_holds_the_arm_and_reset_observer_releases_it(harness):
    contact = harness.hold_still("contact", lambda m: m.level == ContactState.COLLISION)
    limit = np.asarray(ROBOT.effort_limit)
    low, high = DEFAULT_THRESHOLDS[0] * limit, DEFAULT_THRESHOLDS[1] * limit  # the defaults
    np.testing.assert_allclose(contact.contact_thresholds, low)
    np.testing.assert_allclose(contact.collision_thresholds, high)
    r = np.asarray(contact.residuals)
    expected = np.where(np.abs(r) > high, 2, np.where(np.abs(r) > low, 1, 0))
    assert list(contact.levels) == expected.tolist()
    assert harness.spin_until(lambda: harness.events("safe_hold"))
    assert "collision" in harness.events("safe_hold")[-1].message
    assert harness.node.controller.mode == "hold"
    answer = harness.call(Trigger, "reset_observer", Trigger.Request())
    assert answer.success and "left the hold" in answer.message
    assert harness.spin_until(lambda: harness.events("observer_reset"))
    # the push goes on: the observer finds it again from zero, and holds again
    harness.hold_still("contact", lambda m: m.level == ContactState.COLLISION)
    assert harness.spin_until(lambda: len(harness.events("safe_hold")) == 2)


@pytest.mark.parametrize("harness", [{"collision_reaction": "none"}], indirect=True)
def test_thresholds_change_at_run_time_and_bad_ones_are_refused(harness):
    harness.hold_still("contact", lambda m: m.level == ContactState.COLLISION)
    assert harness.spin_until(lambda: harness.events("collision"))
    assert harness.node.controller.mode == "gravity"            # reaction none
    high = np.abs(TAU_EXT) * 2.0 + 1.0
    request = SetContactThresholds.Request(joint_names=NAMES[::-1],
                                           contact_thresholds=high[::-1].tolist(),
                                           collision_thresholds=(2 * high[::-1]).tolist())
    assert harness.call(SetContactThresholds, "set_contact_thresholds", request).success
    contact = harness.hold_still("contact", lambda m: m.level == ContactState.NONE)
    np.testing.assert_allclose(contact.contact_thresholds, high)
    assert list(harness.node.get_parameter("collision_thresholds").value) == (2 * high).tolist()
    for joints, contact_at, collision_at, reason in (
            (["nope"], [1.0], [2.0], "unknown"),
            (NAMES[:1], [3.0], [2.0], ">= the contact threshold"),
            (NAMES[:1], [float("nan")], [2.0], "finite"),
            (NAMES[:2], [1.0], [2.0, 3.0], "expected 2 values")):
        answer = harness.call(SetContactThresholds, "set_contact_thresholds",
                              SetContactThresholds.Request(
                                  joint_names=joints, contact_thresholds=contact_at,
                                  collision_thresholds=collision_at))
        assert not answer.success and reason in answer.message, answer.message
    np.testing.assert_allclose(harness.node.controller.settings.contact_threshold, high)


def test_a_joint_without_effort_has_no_estimate_and_no_wrench(harness):
    """Two publishers: five joints with effort, the sixth without. The sixth is UNKNOWN,
    left out of ~/external_joint_torques; no wrench; /diagnostics names it."""
    names5, last = NAMES[:5], NAMES[5:]

    def both():
        harness.publish_state(last, Q[5:], [0.0])
        harness.publish_state(names5, Q[:5], np.zeros(5), HOLDING[:5])
    def converged():
        messages = harness.inbox["external"]
        return messages and close_to(TAU_EXT[:5], 1e-6)(messages[-1].effort[:5])
    assert harness.spin_until(converged, action=both)
    assert list(harness.inbox["external"][-1].name) == names5
    contact = harness.inbox["contact"][-1]
    assert contact.levels[5] == ContactState.UNKNOWN and contact.residuals[5] == 0.0
    assert not harness.inbox["external_wrench"]
    diagnostics = []
    harness.peer.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    assert harness.spin_until(lambda: diagnostics, action=both)
    values = {kv.key: kv.value for kv in diagnostics[-1].status[0].values}
    assert "no estimate for ['wrist_3_joint']" in values["external_torque_observer"]


@pytest.mark.parametrize("harness", [{"effort_source": "current",
                                      "torque_constants": [10.0, 12.0, 9.0, 3.0, 3.5, 2.5]}],
                         indirect=True)
def test_motor_currents_times_torque_constants(harness):
    k = np.array([10.0, 12.0, 9.0, 3.0, 3.5, 2.5])
    harness.hold_still("external", lambda m: close_to(TAU_EXT, 1e-6)(m.effort),
                       effort=HOLDING / k)


def test_current_without_torque_constants_refuses_to_start():
    with pytest.raises(ValueError, match="torque_constants"):
        Harness(effort_source="current")
