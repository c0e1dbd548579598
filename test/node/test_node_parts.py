"""dynamics_node's parts built without a node: each takes the Live view (the lock, the
controller core, the model, the clock, report) and the entities it needs made for it, so a
part is read and tested on its own. Here the desired-motion subscriptions and the input
watch over a real controller core on rd_ur5e, with the node's entity factories replaced by
recorders."""

import threading

import numpy as np
from sensor_msgs.msg import JointState

import robo_dynamics as rd
from arm_matrix import node_defaults
from conftest import SHIPPED
from robo_dynamics.control.controller import Controller, TRACKING
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.model_changes import ModelChangeSchedule
from robo_dynamics.control.settings import controller_settings
from robo_dynamics.ros.dynamics_node.desired_motion import DesiredMotion
from robo_dynamics.ros.dynamics_node.input_watch import InputWatch
from robo_dynamics.ros.dynamics_node.live import Live

ROBOT = rd.load_robot(SHIPPED / "rd_ur5e.urdf")
NAMES = list(ROBOT.joint_names)
Q = [0.3, -1.1, 1.4, -0.9, 1.2, 0.4]


class Clock:
    t = 10.0

    def __call__(self):
        return self.t


def live_on_a_stream():
    """A Live view over the controller core, its stream started by two joint states."""
    clock, events = Clock(), []
    live = Live(threading.RLock(), clock, events.append)
    solver = rd.make_solver(ROBOT, "pinocchio")
    live.model, live.solver = ROBOT, solver
    live.controller = Controller(solver, JointStateMerger(NAMES, NAMES),
                                 controller_settings(node_defaults(), ROBOT))
    for _ in range(2):
        clock.t += 0.002
        live.controller.step(NAMES, Q, [0.0] * 6, [], clock.t)
    return live, clock, events


def test_the_desired_motion_part_admits_and_refuses_without_a_node():
    """Its subscriptions are made by the factory it is given; a set-point by joint name
    (reversed order) is admitted by the controller core, one with an unknown joint is
    refused with the reason, both told through report."""
    live, clock, events = live_on_a_stream()
    made = {}
    DesiredMotion(live, lambda kind, topic, callback, depth: made.setdefault(topic, callback),
                  lambda name: node_defaults()[name])
    assert {"~/desired_trajectory", "~/desired_state", "~/target_pose"} <= set(made)
    made["~/desired_state"](JointState(name=NAMES[::-1], position=Q[::-1]))
    assert events[-1].kind == "tracking" and live.controller.mode == TRACKING
    np.testing.assert_allclose(live.controller.desired_state(clock.t)[0], Q)
    made["~/desired_state"](JointState(name=["elbow"], position=[0.0]))
    assert events[-1].kind == "refused" and "elbow" in events[-1].message


def test_the_input_watch_reports_a_stale_stream_without_a_node():
    """Its timers are made by the factory it is given; once the joint states are older than
    stale_timeout on the Live view's clock, its stale-input look stops the stream and tells
    it, naming the joints."""
    live, clock, events = live_on_a_stream()
    timers = []
    watch = InputWatch(live, lambda period, callback, **kw: timers.append(callback),
                       lambda: False, ModelChangeSchedule(lambda change: None))
    assert timers == [watch.look_for_stale_input, watch.look_at_the_clock]
    watch.look_for_stale_input()
    assert events == []
    clock.t += 2.0 * live.controller.settings.stale_timeout
    watch.look_for_stale_input()
    assert [e.kind for e in events] == ["stale"] and NAMES[0] in events[0].message
    assert not live.controller.running
