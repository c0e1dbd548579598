"""The closed-loop demo on the default arm (scenario.py says what it shows):

    python -m robo_dynamics.demo [--duration S] [--rate HZ] [--engine mujoco|internal]
                                 [--free-running] [--output PNG] [--phases 7,8]

Prints the node's events, each phase's verdicts, a table and writes plots. Everything runs
on the loopback in a ROS domain of its own; the processes it starts are stopped when it
ends, also on Ctrl-C.
"""

import argparse
import os
import pathlib
import sys
import time

import numpy as np

from ..paths import urdf_path
from ..ros.conversions import seconds
from ..ros.isolation import isolate
from ..ros.processes import stop_processes
from . import compliance
from .compliance import hold_tip
from .goals import ending_at_rest, identify, send_goal
from .linkage import linkage_table, linkage_verdict, plot_linkage, run_linkage
from .person import person_verdict, run_person
from .report import (plot, plot_compliance, plot_external, plot_payload, print_table,
                     summary)
from .scenario import (ARMATURE, DRIVE_ARMATURE, HOLD_AT, JOINT_DAMPING, JOINT_FRICTION,
                       LEAD_IN, PHASES, PUSH_FORCE, PUSH_SECONDS, Q0, RETURN_SECONDS, START,
                       STOP_SECONDS)
from .supervisor import Supervisor, forearm_push, move_to, start_processes, trajectory_from
from .verdicts import (action_verdict, compliance_verdict, contact_verdict,
                       identification_verdict, summarise, verdict, whole_arm_verdict)
from .whole_arm import run_whole_arm

# events the demo leaves out: the stream's start (every phase has one), and the node's
# clock_stopped/clock_resumed, which say how long the simulation stood still in wall time
# (the supervisor pauses it between its steps): they depend on the machine, not the loop
NOT_SHOWN = ("started", "clock_stopped", "clock_resumed")


def run_phase(phase, urdf, rate, duration, progress, engine, lockstep):
    """One phase on the arm in sim_arm: (t, q, τ of the states judged, the events, what
    else was observed)."""
    from .. import load_robot, make_solver
    robot = load_robot(urdf)
    solver = make_solver(robot, "pinocchio")       # the tip's pose, for the demo's side
    sup = Supervisor(phase, robot, rate, lockstep, [])     # there first: found at once
    outcome = None
    try:
        sup.processes[:] = start_processes(urdf, phase, rate, engine, lockstep,
                                           hold_expected=phase.expect == "hold")
        if lockstep:
            sup.found()
        began = time.monotonic()
        identified = _lead_up(sup, phase, progress)
        target = None
        if phase.cartesian:    # held where the tip is, by Cartesian impedance
            event, target = hold_tip(sup, solver)
            if event.kind != "tracking":
                raise RuntimeError(f"phase '{phase.name}': {event.message}")
        now, msg, follow = _desire_motion(sup, phase, duration)
        lead_in, length = (0.0, compliance.SECONDS) if phase.cartesian else (LEAD_IN, duration)
        start = now + lead_in
        sup.log[:] = sup.log[-1:]
        sup.contact.clear()
        report = lambda second: progress(f"  {phase.name}: {second - now:4.0f}/"
                                         f"{lead_in + length:.0f} s")
        push_at = _push(sup, phase, robot, solver, start, duration, report)
        sup.run_to(start + length, report)
        window = len(sup.log)          # the states the table and plots judge
        if phase.action:       # to its end: the last point, then at most constraints.goal_time
            end = seconds(msg.points[-1].time_from_start) + STOP_SECONDS
            sup.run_to(now + end + 1.0, report)
            sup.spin_until(follow.done, "no result of the FollowJointTrajectory goal")
            outcome = follow.result()
        wall = time.monotonic() - began
    finally:
        stop_processes(sup.processes)
        sup.close()
    return _observed(sup, window, start, phase, solver, target, {
        "push_at": push_at, "identified": identified, "wall": wall, "action": outcome,
        "simulated": start + length if lockstep else wall})


def _lead_up(sup, phase, progress):
    """Run to the phase's start; a phase that identifies its payload first holds the arm
    where it is, lets the node find the payload and moves back: the identification's
    result (None for the others)."""
    if phase.guess_kg is None:
        sup.flowing(sup.run_to(START))
        return None
    # hold where the arm is from the first states (told a wrong payload, the arm would drift
    # under gravity compensation), then the node finds the payload
    sup.run_to(HOLD_AT)
    from sensor_msgs.msg import JointState
    sup.desire(sup.set_point_pub, JointState(name=sup.names, position=sup.measured().tolist()),
               "set-point")
    sup.flowing(sup.run_to(START))
    identified = identify(sup, phase, progress)
    print()
    now = sup.now()
    event = sup.desire(sup.trajectory_pub,
                       move_to(sup.names, sup.measured(), Q0, now, RETURN_SECONDS), "move back")
    if event.kind != "tracking":
        raise RuntimeError(f"phase '{phase.name}': {event.message}")
    sup.run_to(now + RETURN_SECONDS + 0.5)
    return identified


def _desire_motion(sup, phase, duration):
    """(now [s], the trajectory sent or None, the goal's follower or None): the phase's
    motion sent from the measured pose, as a supervisor would; if refused, sent again
    later (three tries)."""
    msg = follow = None
    for attempt in range(3):
        now = sup.now()
        if not phase.track:
            break
        msg = trajectory_from(sup.names, sup.measured(), now, duration)
        if phase.action:
            event, follow = send_goal(sup, ending_at_rest(msg))
        else:
            event = sup.desire(sup.trajectory_pub, msg, "trajectory")
        if event.kind == "tracking":
            break
        sup.run_to(now + 1.0)
    return now, msg, follow


def _push(sup, phase, robot, solver, start, duration, report):
    """The phase's push, if it has one: on the forearm for PUSH_SECONDS, or the Cartesian
    phase's push at the tip and its letting go. When it came [s after start], or None."""
    if phase.cartesian:
        return compliance.push_and_let_go(sup, solver, start, report)
    if not phase.push:
        return None
    push_at = LEAD_IN + 0.3 * duration
    sup.run_to(start + push_at, report)
    sup.push(forearm_push(robot, PUSH_FORCE))
    sup.run_to(start + push_at + PUSH_SECONDS, report)
    sup.push(forearm_push(robot, 0.0))
    return push_at


def _observed(sup, window, start, phase, solver, target, figures):
    """(t, q, τ of the states judged from the start, the events shown, observed): the
    supervisor's records, times from the phase's start [s]."""
    log, contact, truth, events = sup.log[:window], sup.contact, sup.truth, sup.events
    stamps = np.array([entry[0] for entry in log]) - start
    keep = stamps >= 0.0
    observed = {"t": np.array([c[0] for c in contact]) - start,
                "levels": np.array([c[1] for c in contact]),
                "estimate": np.array([c[2] for c in contact]),
                "contact_threshold": contact[-1][3] if contact else None,
                "truth_t": np.array([c[0] for c in truth]) - start,
                "truth": np.array([c[1] for c in truth]), **figures}
    if phase.cartesian:                # the tip's positions [m], base frame, and its target
        observed["tip"] = np.array([solver.tip_pose(entry[1])[1] for entry in log])[keep]
        observed["t_tip"] = stamps[keep]
        observed["target"], observed["jacobian"] = target[1], solver.jacobian(log[0][1])
    return (stamps[keep], np.array([entry[1] for entry in log])[keep],
            np.array([entry[2] for entry in log])[keep],
            [(t - start, e) for t, e in events if e.kind not in NOT_SHOWN], observed)


class Outcome:
    """What the phases gave, as they run: the table's records and results, the phases
    NOT as expected, the contact figures, what the plots draw, the time simulated and the
    wall time it took [s]."""

    def __init__(self):
        self.records, self.results, self.contacts, self.failed = {}, {}, {}, 0
        self.simulated = self.wall = 0.0
        self.pushed = self.identified = self.held = self.linkage = None

    def timed(self, observed):
        self.simulated += observed["simulated"]
        self.wall += observed["wall"]

    def judged(self, ok, label, sentence):
        self.failed += not ok
        print(f"  {label}: {sentence}")


def main(argv=None):
    args, selected = _arguments(argv)
    isolate(args.domain_id)
    import rclpy
    from .. import load_robot
    urdf = urdf_path()
    robot = load_robot(urdf)
    _introduce(robot, urdf, args)
    rclpy.init()
    outcome = Outcome()
    try:
        for phase in selected:
            print(f"phase: {phase.name}", flush=True)
            if phase.whole_arm:        # three runs of its own; not in the table
                _whole_arm_phase(outcome, phase, urdf, args, _progress)
            elif phase.linkage and args.free_running:
                print("  not run free-running: the phase is written for lockstep (its two "
                      "runs paused and timed on simulated time), and a step of the node on a "
                      "linkage (about 0.8 ms here, BENCHMARKS.md 3e) leaves little of a 2 ms "
                      "period; in lockstep it takes the time it needs")
            elif phase.linkage:        # the palletizer, two runs of its own; not in the table
                _linkage_phase(outcome, phase, args, _progress)
            elif phase.person:         # a hand in the way, two runs of its own; not in the table
                _person_phase(outcome, phase, urdf, args, _progress)
            else:
                _arm_phase(outcome, phase, robot, urdf, args, _progress)
    except KeyboardInterrupt:
        print("\ninterrupted: processes stopped")
        return 130
    finally:
        rclpy.try_shutdown()
    print_table(outcome.results)
    if outcome.wall > 0.0:
        print(f"\nreal-time factor {outcome.simulated / outcome.wall:.2f}: "
              f"{outcome.simulated:.1f} s simulated in {outcome.wall:.1f} s of wall time "
              "(the loop's, start-up and plots apart)")
    outcome.failed += summary(outcome.results, outcome.contacts, args.engine)
    _plots(outcome, selected, pathlib.Path(args.output).resolve())
    if outcome.failed:
        print(f"{outcome.failed} phase(s) NOT as expected")
    return 1 if outcome.failed else 0


def _progress(text):
    """A progress line, overwritten by the next."""
    print(text, end="\r", flush=True)


def _arguments(argv):
    """(the parsed arguments, the phases chosen)."""
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
    parser.add_argument("--domain-id", type=int, default=None,
                        help="ROS_DOMAIN_ID, 0-101 (default: one drawn from the process id)")
    args = parser.parse_args(argv)
    try:
        chosen = (range(1, len(PHASES) + 1) if args.phases is None
                  else sorted({int(k) for k in args.phases.split(",")}))
        selected = [PHASES[k - 1] for k in chosen if k >= 1]
    except (ValueError, IndexError):
        parser.error(f"--phases: comma-separated numbers from 1 to {len(PHASES)}")
    if args.domain_id is not None and not 0 <= args.domain_id <= 101:
        parser.error("--domain-id: from 0 to 101")
    return args, selected


def _introduce(robot, urdf, args):
    """The loop and the plant, in two lines."""
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
          + (f", rotor armature {ARMATURE} kg·m² (phase 11: drives' armature "
             f"{DRIVE_ARMATURE} kg·m², which the node is told)" if args.engine == "mujoco"
             else "")
          + "; no obstacle")


def _whole_arm_phase(outcome, phase, urdf, args, progress):
    """The whole arm identified (whole_arm.py) and its verdict."""
    observed = run_whole_arm(phase, urdf, args.rate, args.engine, not args.free_running,
                             pathlib.Path(args.output).resolve().parent, progress)
    outcome.timed(observed)
    ok, sentence = whole_arm_verdict(observed)
    print(f"\n  written beside the plots: {observed['plant'].name} (the plant), "
          f"{observed['identified'].name} (identified)")
    outcome.judged(ok, "verdict", sentence)


def _linkage_phase(outcome, phase, args, progress):
    """The palletizer, loop modelled and cut (linkage.py): its table and verdict."""
    linkage = outcome.linkage = run_linkage(phase, args.rate, not args.free_running,
                                            progress)
    outcome.timed(linkage)
    print("\n" + "\n".join(linkage_table(linkage, linkage["names"])))
    ok, sentence = linkage_verdict(linkage)
    outcome.judged(ok, "verdict", sentence)


def _person_phase(outcome, phase, urdf, args, progress):
    """A hand in the tool's way, the limit on and off (person.py): its verdict."""
    observed = run_person(phase, urdf, args.rate, args.engine, not args.free_running,
                          progress)
    outcome.timed(observed)
    print()
    for run in ("limited", "off"):
        holds = [e.message for e in observed[run]["events"] if e.kind == "safe_hold"]
        print(f"  {run}: " + (holds[0] if holds else "no safe hold"))
    ok, sentence = person_verdict(observed)
    outcome.judged(ok, "verdict", sentence)


def _arm_phase(outcome, phase, robot, urdf, args, progress):
    """One phase on the arm (run_phase): its events, verdicts and table row."""
    t, q, tau, events, observed = run_phase(phase, urdf, args.rate, args.duration, progress,
                                            args.engine, not args.free_running)
    outcome.timed(observed)
    print()
    for at, event in events:
        print(f"  event at t = {at:+.2f} s ({event.kind}): {event.message}")
    outcome.records[phase.name] = (phase.track, t, q, tau)
    result = outcome.results[phase.name] = summarise(phase, t, q, tau, robot.effort_limit)
    if phase.cartesian:
        ok, sentence, compliant = compliance_verdict(observed, events)
        outcome.held = (observed, compliant)
    else:
        ok, sentence = verdict(phase, result, events)
    seen, contact_sentence, figures = contact_verdict(phase, observed, 1.0 / args.rate)
    outcome.contacts[phase.name] = figures
    outcome.failed += not (ok and seen)
    print(f"  verdict: {sentence}")
    print(f"  external torques: {contact_sentence}")
    if phase.guess_kg is not None:
        outcome.identified = observed["identified"]
        found, sentence = identification_verdict(phase, observed)
        outcome.judged(found, "identification", sentence)
    if phase.push:
        outcome.pushed = observed
    if phase.action:
        done, sentence = action_verdict(observed["action"])
        outcome.judged(done, "action", sentence)


def _plots(outcome, selected, path):
    """The plots of what ran, each path printed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if plot(outcome.records, path):
        print(f"plot: {path}")
    identified = [p for p in selected if p.guess_kg is not None]
    if outcome.identified is not None and outcome.identified.success:
        payload_plot = path.with_name(path.stem + "_payload.png")
        plot_payload(identified[0], outcome.identified, payload_plot)
        print(f"plot: {payload_plot}")
    if outcome.pushed is not None and len(outcome.pushed["t"]):
        external = path.with_name(path.stem + "_external_torques.png")
        plot_external(outcome.pushed, external)
        print(f"plot: {external}")
    if outcome.held is not None and outcome.held[1]:
        tip = path.with_name(path.stem + "_cartesian.png")
        plot_compliance(*outcome.held, tip)
        print(f"plot: {tip}")
    if outcome.linkage is not None:
        closed = path.with_name(path.stem + "_linkage.png")
        plot_linkage(outcome.linkage, outcome.linkage["names"], closed)
        print(f"plot: {closed}")


if __name__ == "__main__":
    sys.exit(main())
