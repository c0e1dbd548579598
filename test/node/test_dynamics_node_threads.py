"""dynamics_node's threads: joint states never wait for markers, /diagnostics or a trajectory
being read; the joint-state thread's scheduling (SCHED_FIFO when asked, the cross-check
giving way).

rclpy runs in this process on the loopback only (conftest sets the discovery range and a
domain id of its own before rclpy is imported)."""

import contextlib
import errno
import os
import sys
import threading
import time

import pytest
from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robo_dynamics.backends.cross_check import CrossCheckSteps
from robo_dynamics.ros.dynamics_node import joint_state_thread
from robo_dynamics.control.solver_set import CROSS_CHECKED
from conftest import rel

from node_harness import (HANG_GUARD, NAMES, Q, QD, REF, Harness, backend, diagnostic_value,  # noqa: F401 (fixtures)
                          harness, ros_context)


def _joint_state_handled_meanwhile(harness):
    """Publish a joint state and wait (hang guard: HANG_GUARD s) until the node has handled
    it: True when it did, i.e. when the joint-state thread was not kept waiting."""
    before = harness.handled()
    harness.publish_state(NAMES, Q, QD)
    deadline = time.monotonic() + HANG_GUARD
    while harness.handled() == before and time.monotonic() < deadline:
        time.sleep(0.001)
    return harness.handled() > before


@pytest.mark.parametrize("harness", [{"diagnostics_rate": 20.0}], indirect=True)
def test_joint_states_do_not_wait_for_markers_diagnostics_or_a_trajectory_being_read(
        harness, monkeypatch):
    """Building rviz2 markers or /diagnostics and reading a desired trajectory take
    milliseconds on the main executor; all happen outside the node's lock, so joint states
    are handled meanwhile (here: one is sent and handled while each is in progress). The
    interpreter lock too: another thread running Python keeps it at most
    GIL_SWITCH_INTERVAL."""
    from robo_dynamics.ros import conversions
    from robo_dynamics.ros.dynamics_node import diagnostics, markers
    harness.stream("command")
    assert sys.getswitchinterval() <= joint_state_thread.GIL_SWITCH_INTERVAL
    outcome = {}
    build, read, entry = (markers.marker_array, conversions.trajectory_from_msg,
                          diagnostics.KeyValue)

    def slow_diagnostics(**fields):       # each value of /diagnostics becomes a KeyValue
        if "diagnostics" not in outcome:   # the first of the first report
            outcome["diagnostics"] = _joint_state_handled_meanwhile(harness)
        return entry(**fields)

    def slow_markers(*args):
        outcome.setdefault("markers", _joint_state_handled_meanwhile(harness))
        return build(*args)

    def slow_trajectory(*args):
        outcome.setdefault("trajectory", _joint_state_handled_meanwhile(harness))
        return read(*args)

    monkeypatch.setattr(markers, "marker_array", slow_markers)
    monkeypatch.setattr(conversions, "trajectory_from_msg", slow_trajectory)
    monkeypatch.setattr(diagnostics, "KeyValue", slow_diagnostics)
    assert harness.spin_until(lambda: "diagnostics" in outcome)
    assert outcome["diagnostics"], "a joint state waited for /diagnostics"
    harness.stream_until("markers", lambda m: "markers" in outcome)   # not one sent before
    traj = JointTrajectory(joint_names=NAMES)
    traj.points = [JointTrajectoryPoint(positions=list(Q), time_from_start=Duration(sec=1))]
    harness.trajectory.publish(traj)
    assert harness.spin_until(lambda: "trajectory" in outcome)
    assert outcome == {"markers": True, "diagnostics": True, "trajectory": True}


def _thread_scheduling(harness):
    """(policy, priority) of the node's joint-state thread, read back from the kernel."""
    tid = harness.node.joint_states.thread.native_id
    return os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority


@pytest.mark.parametrize("harness", [{"thread_priority": 10, "diagnostics_rate": 20.0}],
                         indirect=True)
def test_thread_priority_puts_the_joint_state_thread_on_sched_fifo(harness):
    if not joint_state_thread.fifo_permitted(1):
        pytest.skip("this process may not use SCHED_FIFO (the refusal is tested below)")
    assert rel(harness.stream("gravity").effort, REF.gravity(Q)) <= 1e-9
    assert _thread_scheduling(harness) == (os.SCHED_FIFO, 10)
    assert os.sched_getscheduler(0) == os.SCHED_OTHER        # only that thread changed
    assert harness.spin_until(lambda: harness.inbox["diagnostics"] and diagnostic_value(
        harness.inbox["diagnostics"][-1], "joint_state_thread") == "SCHED_FIFO 10")


@pytest.mark.parametrize("harness", [{"thread_priority": 10, "cross_check_rate": 50.0,
                                      "diagnostics_rate": 20.0}], indirect=True)
def test_cross_check_steps_give_way_on_the_normal_scheduler(harness, monkeypatch):
    """At SCHED_FIFO each cross-check step runs on the normal scheduler (it must not keep a
    core from the process waiting for the command), and the thread goes back to its
    priority after it. Both are read on the thread itself, in the step and just after the
    block that gives way: read from here, a step may be under way at that moment."""
    if not joint_state_thread.fifo_permitted(1):
        pytest.skip("this process may not use SCHED_FIFO (the refusal is tested below)")
    seen, after, step = [], [], CrossCheckSteps.step
    joint_states = harness.node.joint_states
    give_way = joint_states.giving_way

    def recorded(steps):
        seen.append((threading.get_native_id(), os.sched_getscheduler(0)))
        step(steps)

    @contextlib.contextmanager
    def observed():
        with give_way():
            yield
        after.append((threading.get_native_id(), os.sched_getscheduler(0),
                      os.sched_getparam(0).sched_priority))
    monkeypatch.setattr(CrossCheckSteps, "step", recorded)
    monkeypatch.setattr(joint_states, "giving_way", observed)
    harness.stream_until("diagnostics", lambda d: diagnostic_value(d, "cross_check_momentum_terms")
                         is not None)
    thread = joint_states.thread.native_id
    assert len(seen) >= 2 * len(CROSS_CHECKED) and len(after) >= 2 * len(CROSS_CHECKED)
    assert set(seen) == {(thread, os.SCHED_OTHER)}
    assert set(after) == {(thread, os.SCHED_FIFO, 10)}
    assert float(diagnostic_value(harness.inbox["diagnostics"][-1],
                        "cross_check_max_relative_difference")) < 1e-9


def test_refused_thread_priority_warns_and_runs_on(monkeypatch):
    def refuse(pid, policy, param):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(joint_state_thread.os, "sched_setscheduler", refuse)
    harness = Harness(thread_priority=10, diagnostics_rate=20.0)
    try:
        assert rel(harness.stream("gravity").effort, REF.gravity(Q)) <= 1e-9
        assert _thread_scheduling(harness)[0] == os.SCHED_OTHER
        assert harness.spin_until(lambda: harness.inbox["diagnostics"] and diagnostic_value(
            harness.inbox["diagnostics"][-1], "joint_state_thread")
            == "normal (SCHED_FIFO 10 refused: Operation not permitted)")
    finally:
        harness.close()


def test_default_joint_state_thread_is_on_the_normal_scheduler(harness):
    harness.stream("gravity")
    assert _thread_scheduling(harness) == (os.SCHED_OTHER, 0)
