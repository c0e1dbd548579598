"""The demo's closed-linkage phase (scenario.py, 12.): the shipped palletizer
(urdf/rd_palletizer.urdf, config/rd_palletizer.yaml) on sim_arm's MuJoCo linkage (its loop
an equality constraint), two runs with fresh processes, each from the same start:

    loop modelled  dynamics_node from the params file: gravity compensation, then the
                   pick-and-place as ~/desired_trajectory (computed torque);
    cut tree       the same motors commanded by this process from the tree with the loop
                   left open and the passive joints' torques dropped (what a tree-only
                   dynamics library gives): g(q) of the motors, then computed torque at
                   the node's default gains, the passive joints' accelerations taken as 0.

Each run: gravity compensation for LINKAGE_HOLD_SECONDS (the drift), then a move to the
place pose and back (quintics of LINKAGE_MOVE_SECONDS each, from where the motors are). In
lockstep (simulated time from 0); run.py does not run it free-running."""

import json
import subprocess
import time

import numpy as np

from ..paths import share_directory
from ..ros.conversions import trajectory_from_msg
from ..ros.parameter_tables import DYNAMICS_NODE
from ..ros.processes import node_command, stop_processes
from .scenario import (DRIFT_BOUND, LINKAGE, LINKAGE_HOLD_SECONDS, LINKAGE_MOVE_SECONDS,
                       LINKAGE_RATIO, START, TRACKING_BOUND)
from .supervisor import Supervisor, node_environment


def linkage_files():
    """(urdf, params file) of the shipped palletizer."""
    share = share_directory()
    return share / "urdf" / f"{LINKAGE['arm']}.urdf", share / "config" / f"{LINKAGE['arm']}.yaml"


def pick_and_place(names, start, now):
    """JointTrajectory from `start` (the motors' positions) at `now` [s] to the place pose
    and back, at rest at each end (quintics)."""
    import rclpy.duration
    import rclpy.time
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    place = np.asarray(LINKAGE["theta0"]) + np.asarray(LINKAGE["place"])
    zero = [0.0] * len(names)
    msg = JointTrajectory(joint_names=names)
    msg.header.stamp = rclpy.time.Time(seconds=now).to_msg()
    for k, q in enumerate((start, place, start)):
        msg.points.append(JointTrajectoryPoint(
            positions=list(map(float, q)), velocities=zero, accelerations=zero,
            time_from_start=rclpy.duration.Duration(seconds=k * LINKAGE_MOVE_SECONDS).to_msg()))
    return msg


class CutTree:
    """This process as the motors' controller with the loop left open: answers each joint
    state sim_arm publishes (lockstep) with the motors' rows of the tree's inverse
    dynamics, once (a state sent again for want of a command has one on its way, as
    dynamics_node does), for `supervisor` (its node, and what it has answered)."""

    def __init__(self, supervisor, chain):
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from ..closed_chain.tree_dynamics import tree_rnea
        self.chain, self.rnea, self.motion, self.answered = chain, tree_rnea, None, None
        self.supervisor, node = supervisor, supervisor.node
        self.kp, self.kd = DYNAMICS_NODE["kp"].default[0], DYNAMICS_NODE["kd"].default[0]
        self.publisher = node.create_publisher(Float64MultiArray, "/dynamics_node/commands", 10)
        self.message = Float64MultiArray
        node.create_subscription(JointState, "/joint_states", self.on_state, 10)

    def on_state(self, msg):
        stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        if stamp == self.answered:       # the same state sent again (lockstep): answered
            return
        self.answered = stamp
        tree, motors = self.chain.tree, list(self.chain.actuated)
        index = [list(msg.name).index(name) for name in tree.joint_names]
        q, qd = np.array(msg.position)[index], np.array(msg.velocity)[index]
        qdd, t = np.zeros_like(q), msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        if self.motion is not None:
            q_d, qd_d, qdd_d = self.motion.sample(t)
            qdd[motors] = qdd_d + self.kp * (q_d - q[motors]) + self.kd * (qd_d - qd[motors])
        else:
            qd = np.zeros_like(q)          # gravity compensation: g(q)
        self.publisher.publish(self.message(data=self.rnea(tree, q, qd, qdd)[motors].tolist()))
        self.supervisor.answered = t      # what a free-running supervisor waits for


def run_linkage(phase, rate, lockstep, progress):
    """{"loop": figures, "cut": figures, "names": the motors, "simulated" [s], "wall" [s]},
    figures = {"drift" (k,) [rad] over the hold, "error" (k,) [rad] each motor's largest
    tracking error in the move, "t" (N,) [s] from the hold's start, "e" (N, k) [rad] the
    error from the held pose, then from the move, "move" [s] its start}."""
    from ..closed_chain import load_closed_chain
    from ..closed_chain.motor_model import motor_model
    from ..ros.dynamics_node.closure_parameters import linkage_section
    urdf, params = linkage_files()
    section = linkage_section(params)
    chain = load_closed_chain(urdf, section)
    model = motor_model(chain, section["tip_link"])
    names = list(model.joint_names)
    observed = {"simulated": 0.0, "wall": 0.0, "names": names}
    for run in ("loop", "cut"):
        sim, node = _linkage_commands(urdf, params, section, rate, lockstep)
        sup = Supervisor(phase, model, rate, lockstep, [])
        cut = CutTree(sup, chain) if run == "cut" else None
        try:
            sup.processes[:] = [subprocess.Popen(cmd, env=node_environment()) for cmd in
                                ([sim] if cut is not None else [sim, node])]
            if lockstep:
                sup.found(dynamics_node=cut is None,
                          publishers=() if cut is None else (cut.publisher,))
            began, simulated = time.monotonic(), sup.now()
            observed[run] = _hold_then_move(sup, phase, names, cut, lambda text, run=run:
                                            progress(f"  {run}: {text}"))
            observed["simulated"] += sup.now() - simulated
            observed["wall"] += time.monotonic() - began
        finally:
            stop_processes(sup.processes)
            sup.close()
    progress(" " * 60)
    return observed


def _linkage_commands(urdf, params, section, rate, lockstep):
    """(sim_arm's command line, dynamics_node's) for the palletizer: MuJoCo's linkage with
    its loop, the node from the shipped params file; in lockstep, supervised."""
    from ..ros.dynamics_node.closure_parameters import parameter_names   # rclpy: isolated
    sim = [*node_command("sim_arm", "--log-level", "warn"),
           "-p", f"robot_description_file:={urdf}",
           "-p", f"initial_positions:={list(LINKAGE['theta0'])}",
           "-p", f"publish_rate:={rate}", "-p", "command_timeout:=0.1",
           "-p", "engine:=mujoco", "-r", "effort_commands:=/dynamics_node/commands"]
    for key, value in parameter_names(section).items():      # JSON: YAML's flow style
        sim += ["-p", f"{key}:={json.dumps(value)}"]
    if lockstep:
        sim += ["-p", "lockstep:=true", "-p", "lockstep_supervised:=true",
                "-p", "lockstep_max_speed:=0.0", "-p", "lockstep_timeout:=0.5"]
    node = [*node_command("dynamics_node", "--log-level", "warn"),
            "-p", f"robot_description_file:={urdf}", "--params-file", str(params),
            "-p", "marker_rate:=0.0", "-p", f"use_sim_time:={str(lockstep).lower()}"]
    return sim, node


def _hold_then_move(sup, phase, names, cut, progress):
    """One run: held LINKAGE_HOLD_SECONDS, then a pick and place (by the node, or by the
    cut tree's controller `cut`): its figures (run_linkage)."""
    sup.run_to(START)
    held_from, first = sup.measured(), len(sup.log)
    sup.run_to(START + LINKAGE_HOLD_SECONDS, lambda t: progress(f"holding, {t:.0f} s"))
    drift = sup.measured() - held_from
    now = sup.now()
    msg = pick_and_place(names, sup.measured(), now)
    motion = trajectory_from_msg(msg, names, now)
    if cut is None:
        event = sup.desire(sup.trajectory_pub, msg, "pick-and-place")
        if event.kind != "tracking":
            raise RuntimeError(f"phase '{phase.name}': {event.message}")
    else:
        cut.motion = motion
    sup.run_to(now + 2 * LINKAGE_MOVE_SECONDS + 0.2,
               lambda t: progress(f"pick and place, {t:.0f} s"))
    t = np.array([entry[0] for entry in sup.log[first:]])
    q = np.array([entry[1] for entry in sup.log[first:]])
    error = q - np.array([motion.sample(s)[0] if s > now else held_from for s in t])
    return {"drift": drift, "error": np.abs(error[t > now]).max(axis=0), "t": t - START,
            "e": error, "move": now - START}


def linkage_table(observed, names):
    """The phase's table: each motor's drift over the hold and largest tracking error, the
    loop modelled and cut [mrad]."""
    loop, cut = observed["loop"], observed["cut"]
    lines = [f"  {'motor':16s} {'drift: loop':>12s} {'cut tree':>10s}   "
             f"{'tracking: loop':>15s} {'cut tree':>10s}   [mrad]"]
    for k, name in enumerate(names):
        lines.append(f"  {name:16s} {1e3 * abs(loop['drift'][k]):12.3f} "
                     f"{1e3 * abs(cut['drift'][k]):10.1f}   {1e3 * loop['error'][k]:15.3f} "
                     f"{1e3 * cut['error'][k]:10.1f}")
    return lines


def linkage_verdict(observed):
    """(ok, sentence): the cut tree's largest drift and tracking error LINKAGE_RATIO × the
    modelled loop's or more, the modelled loop's within DRIFT_BOUND and TRACKING_BOUND."""
    loop, cut = observed["loop"], observed["cut"]
    drift = [np.abs(run["drift"]).max() for run in (loop, cut)]
    error = [run["error"].max() for run in (loop, cut)]
    ok = (drift[1] >= LINKAGE_RATIO * drift[0] and error[1] >= LINKAGE_RATIO * error[0]
          and drift[0] <= DRIFT_BOUND and error[0] <= TRACKING_BOUND)
    return ok, (f"loop modelled: drift {1e3 * drift[0]:.3f} mrad, tracking error "
                f"{1e3 * error[0]:.3f} mrad; cut tree: {1e3 * drift[1]:.0f} and "
                f"{1e3 * error[1]:.0f} mrad ({drift[1] / max(drift[0], 1e-12):.0f} and "
                f"{error[1] / max(error[0], 1e-12):.0f} ×; at least {LINKAGE_RATIO:g} × "
                f"asked, the modelled loop within {1e3 * DRIFT_BOUND:g} and "
                f"{1e3 * TRACKING_BOUND:g} mrad), "
                + ("as expected" if ok else "NOT as expected"))


def plot_linkage(observed, names, path):
    """Each motor's drift from the held pose, then its tracking error in the pick-and-place,
    the loop modelled and cut."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, 2, figsize=(11, 4), sharex=True)
    for ax, (run, title) in zip(axes, (("loop", "loop modelled (dynamics_node)"),
                                       ("cut", "cut tree (the loop left open)"))):
        for k, name in enumerate(names):
            ax.plot(observed[run]["t"], 1e3 * observed[run]["e"][:, k], label=name)
        ax.axvline(observed[run]["move"], color="gray", linestyle="--")
        ax.set_title(f"palletizer: {title}")
        ax.set_xlabel("t [s]: held, then (dashed) the pick and place")
        ax.set_ylabel("error from the held pose, then the motion [mrad]")
        ax.grid(True)
    axes[0].legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
