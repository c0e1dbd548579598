"""The node's benchmarks: dynamics_node at 1 kHz against an echo node (drops, callback time,
latency, CPU, memory), alone and while trajectories are checked."""

import subprocess
import sys
import time

import numpy as np

from .measure import ARMS, markdown_table, process_stats

PRIORITY = 50        # SCHED_FIFO priority of the node benchmark's real-time runs
TARGETS = {"callback_p99_us": 250.0, "latency_ratio": 1.2, "p99_ratio": 1.3}
OBSERVER_TARGET_US = 30.0   # the external-torque observer's cost per joint state


def drive(command, out_topic, seconds, rate, names, positions, set_point=None, effort=None,
          listen=(), motion=None):
    """Start `command`, publish JointState (with `effort`, the measured torques) at `rate`
    for `seconds`, and measure. listen: (message type, topic) of further outputs to
    subscribe to (received and dropped). motion: (positions, velocities, efforts) of the
    k-th state sent, as lists (default: `positions` at rest, `effort`)."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from robo_dynamics.ros.processes import spin_for, spin_until, stop_processes
    process = subprocess.Popen(command)
    node = rclpy.create_node("benchmark_driver")
    received, latencies, diagnostics = [0], [], {}
    clock = node.get_clock()
    measuring, sent_stamps, answered = [False], set(), set()

    def on_output(msg):
        now = clock.now().nanoseconds
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        received[0] += 1
        if measuring[0] and stamp in sent_stamps:
            answered.add(stamp)
            latencies.append((now - stamp) * 1e-3)

    windows = []          # (p50, p99, max) of each callback-time report during the run
    observer = []         # the same of the observer's own time in the callback
    command = []          # the same of the time from the callback's start to the command

    def on_diagnostics(msg):
        for status in msg.status:
            if status.name.startswith("robo_dynamics"):
                diagnostics.update({kv.key: kv.value for kv in status.values})
                for what, reports in (("callback", windows), ("observer", observer),
                                      ("command", command)):
                    if measuring[0] and f"{what}_p99_us" in diagnostics:
                        reports.append(tuple(float(diagnostics[f"{what}_{k}_us"])
                                             for k in ("p50", "p99", "max")))

    node.create_subscription(JointState, out_topic, on_output, 100)
    for kind, topic in listen:
        node.create_subscription(kind, topic, lambda msg: None, 100)
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    pub = node.create_publisher(JointState, "/joint_states", 100)
    set_point_pub = node.create_publisher(JointState, "/dynamics_node/desired_state", 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    msg = JointState(name=names, position=list(positions), velocity=[0.0] * len(names),
                     effort=[] if effort is None else [float(x) for x in effort])
    sent = [0]

    def publish():
        now = clock.now()
        if motion is not None:
            msg.position, msg.velocity, msg.effort = motion(sent[0])
        msg.header.stamp = now.to_msg()
        pub.publish(msg)
        sent[0] += 1
        if measuring[0]:
            sent_stamps.add(now.nanoseconds)

    try:
        # until the node answers (and, with a set-point, tracks it: computed torque is timed)
        if not spin_until(executor, lambda: received[0] > 0 and (
                set_point is None or diagnostics.get("mode") == "tracking"), 30.0, [process],
                action=lambda: (publish(), set_point is not None
                                and set_point_pub.publish(set_point))):
            raise RuntimeError(f"{process.args[2]} did not answer")
        executor.spin_once(timeout_sec=0.5)
        received[0], latencies[:], sent[0] = 0, [], 0
        measuring[0] = True
        cpu0, _ = process_stats(process.pid)
        timer = node.create_timer(1.0 / rate, publish)
        start = time.monotonic()
        rss_start = process_stats(process.pid)[1]
        spin_for(executor, seconds)
        node.destroy_timer(timer)
        elapsed = time.monotonic() - start
        sent_during = len(sent_stamps)
        spin_for(executor, 1.5)                       # the last outputs and diagnostics
        cpu1, rss_end = process_stats(process.pid)
    finally:
        stop_processes([process])
        executor.shutdown()
        node.destroy_node()
    p50, p99 = np.percentile(latencies, [50, 99]) if latencies else (np.nan, np.nan)
    return {"sent": sent_during, "received": len(answered), "elapsed": elapsed,
            "latency_p50": float(p50), "latency_p99": float(p99),
            "cpu_percent": 100.0 * (cpu1 - cpu0) / elapsed, "rss_start": rss_start,
            "rss_end": rss_end, "diagnostics": diagnostics, "windows": windows,
            "observer_windows": observer, "command_windows": command}


def node_benchmark(seconds, rate=1000.0, priority=PRIORITY):
    """The same driver against dynamics_node (each backend; cross-check at 1 Hz and 10 Hz),
    at SCHED_FIFO `priority` (when permitted) and on the normal scheduler, each run just
    after one against the echo node at the same scheduling (its floor, measured next to it:
    this host's speed drifts within minutes): {(process, backend, cross-check rate,
    priority, observer): result with the echo's result under "echo"}, priority 0 for the
    normal scheduler."""
    import rclpy
    from sensor_msgs.msg import JointState

    import robo_dynamics as rd
    from robo_dynamics.ros.dynamics_node.joint_state_thread import fifo_permitted
    from robo_dynamics_interfaces.msg import OperationalSpaceInertia
    path, tip = ARMS["Panda (7-DoF)"]
    model = rd.load_robot(path, tip_link=tip)
    names = list(model.joint_names)
    q0 = np.array([0.1, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7])
    set_point = JointState(name=names, position=(q0 + 0.005).tolist())   # within tolerance
    effort = rd.make_solver(model, "pinocchio").gravity(q0)    # measured: holding still
    dynamics = [sys.executable, "-m", "robo_dynamics.ros.dynamics_node.node", "--ros-args",
                "--log-level", "warn", "-p", f"robot_description_file:={path}",
                "-p", f"tip_link:={tip}", "-p", "marker_rate:=0.0", "-p", "diagnostics_rate:=2.0"]
    echo = [sys.executable, "-m", "benchmarks.echo_node"]
    quiet = ["--ros-args", "--log-level", "warn"]
    level = priority if fifo_permitted(priority) else 0
    plan = [("dynamics", "pinocchio", 1.0, level, True),
            ("dynamics", "pinocchio", 1.0, level, False),
            ("dynamics", "rnea", 1.0, level, True), ("dynamics", "pinocchio", 10.0, level, True),
            ("dynamics", "rnea", 10.0, level, True),
            ("dynamics+Λ", "rnea", 1.0, level, True)]
    if level:
        plan += [("dynamics", "pinocchio", 1.0, 0, True)]
    runs = {}
    rclpy.init()
    try:
        for key in plan:
            process, backend, cross_check_rate, run_level, observer = key
            floor = drive(echo + (["--priority", str(run_level)] if run_level else []) + quiet,
                          "/echo", seconds, rate, names, q0, effort=effort)
            runs[key] = drive(
                dynamics + ["-p", f"thread_priority:={run_level}", "-p",
                            f"backend:={backend}", "-p",
                            f"cross_check_rate:={cross_check_rate}", "-p",
                            f"observer_gain:={[50.0] if observer else [0.0]}"],
                "/dynamics_node/commanded_torques", seconds, rate, names, q0, set_point,
                effort=effort, listen=[(OperationalSpaceInertia,
                                        "/dynamics_node/operational_space_inertia")]
                if process == "dynamics+Λ" else ())
            runs[key]["echo"] = floor
    finally:
        rclpy.try_shutdown()
    return runs


def check_load_benchmark(seconds, rate=1000.0, priority=PRIORITY):
    """dynamics_node (Pinocchio, cross-check 1 Hz, observer on) at `rate`, alone and while
    benchmarks/check_client.py calls ~/check_trajectory (10 001 samples) twice a second:
    rows for the table."""
    import rclpy
    from sensor_msgs.msg import JointState

    import robo_dynamics as rd
    from robo_dynamics.ros.dynamics_node.joint_state_thread import fifo_permitted
    from robo_dynamics.ros.processes import node_command, stop_processes
    path, tip = ARMS["Panda (7-DoF)"]
    model = rd.load_robot(path, tip_link=tip)
    names = list(model.joint_names)
    q0 = np.array([0.1, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7])
    set_point = JointState(name=names, position=(q0 + 0.005).tolist())
    effort = rd.make_solver(model, "pinocchio").gravity(q0)
    level = priority if fifo_permitted(priority) else 0
    command = node_command(
        "dynamics_node", "--log-level", "warn", "-p", f"robot_description_file:={path}",
        "-p", f"tip_link:={tip}", "-p", "marker_rate:=0.0", "-p", "diagnostics_rate:=2.0",
        "-p", f"thread_priority:={level}", "-p", "observer_gain:=[50.0]")
    rows = []
    rclpy.init()
    try:
        for loaded in (False, True):
            client = (subprocess.Popen([sys.executable, "-m", "benchmarks.check_client", "0.5"],
                                       stdout=subprocess.PIPE, text=True) if loaded else None)
            try:
                run = drive(command, "/dynamics_node/commanded_torques", seconds, rate, names,
                            q0, set_point, effort=effort)
            finally:
                if client is not None:
                    stop_processes([client])
            calls = client.stdout.read().split() if client is not None else []
            worst = max((w[2] for w in run["windows"]), default=float("nan"))
            rows.append(("with ~/check_trajectory twice a second" if loaded else "alone",
                         run["sent"] - run["received"], f"{run['latency_p50']:.0f}",
                         f"{run['latency_p99']:.0f}", f"{worst:.0f}",
                         f"{calls[1]} × {calls[3]} ms" if len(calls) == 4 else "—"))
    finally:
        rclpy.try_shutdown()
    return rows, level


def callback_percentiles(run, what="windows"):
    """(p50, p99, worst p99, max) of the node's callback time (what="command_windows": of
    the part up to the command's publication) over the run's diagnostics reports: the
    median of the reports' p50 and p99, the worst report's p99, the largest max."""
    w = np.array(run[what] or [(np.nan,) * 3])
    return (float(np.median(w[:, 0])), float(np.median(w[:, 1])), float(w[:, 1].max()),
            float(w[:, 2].max()))


def node_section(runs, seconds, priority):
    """The markdown of section 3 from node_benchmark's runs."""
    label = {0: "normal scheduler", priority: f"SCHED_FIFO {priority}"}
    rows = []
    for (process, backend, cross_check_rate, level, observer), r in runs.items():
        name = (f"dynamics_node, backend {backend}, cross-check {cross_check_rate:g} Hz, "
                f"observer {'on' if observer else 'off'}"
                + (", Λ subscribed too" if process == "dynamics+Λ" else ""))
        callback, command = ("{:.0f} / {:.0f}".format(*callback_percentiles(r, what)[:2])
                             for what in ("windows", "command_windows"))
        echo = r["echo"]
        rows.append((name, label[level], r["sent"], r["sent"] - r["received"],
                     echo["sent"] - echo["received"], callback, command,
                     f"{r['latency_p50']:.0f} / {r['latency_p99']:.0f}",
                     f"{echo['latency_p50']:.0f} / {echo['latency_p99']:.0f}",
                     f"{r['latency_p50'] / echo['latency_p50']:.2f} / "
                     f"{r['latency_p99'] / echo['latency_p99']:.2f}",
                     f"{r['cpu_percent']:.0f} / {echo['cpu_percent']:.0f}",
                     f"{r['rss_start']:.0f} → {r['rss_end']:.0f}"))
    table = markdown_table(("process", "joint-state thread", "sent", "drops", "echo drops",
                            "callback p50 / p99 [µs]", "to the command p50 / p99 [µs]",
                            "latency p50 / p99 [µs]", "echo latency p50 / p99 [µs]",
                            "× echo p50 / p99", "CPU node / echo [%]", "RSS [MiB]"), rows)
    deployed = max(key[3] for key in runs)
    verdict = lambda ok: "met" if ok else "**not met**"   # noqa: E731
    ours = runs["dynamics", "rnea", 1.0, deployed, True]
    on, off = (callback_percentiles(runs["dynamics", "pinocchio", 1.0, deployed, observer])
               for observer in (True, False))
    p50, p99, worst, largest = callback_percentiles(ours)
    drops = ours["sent"] - ours["received"]
    ratio = ours["latency_p50"] / ours["echo"]["latency_p50"]
    text = (
        f"## 3. The node at 1 kHz\n\nA driver publishes `JointState` for the Panda at 1 kHz "
        f"for {seconds:.0f} s, with efforts (the torques that hold it still); dynamics_node "
        "computes gravity compensation, computed torque (to a set-point) and (observer on, "
        "the default) the external torques for each; it computes and publishes each output "
        "that has a subscriber. Here the driver listens to the computed torque, and in the "
        "run marked \"Λ subscribed too\" also to Λ (then J, M⁻¹ and Λ are computed for every "
        "state, after its command is out). The cross-check runs on the joint-state thread, "
        "one quantity of one backend per state after that state's command is published, "
        "on the normal scheduler. Latency: from "
        "the joint state's stamp to the driver's receipt of the computed torque. Each run "
        "follows one of the same driver against an echo node (subscribe, copy, publish) at "
        f"the same scheduling, for {seconds:.0f} s: the floor, measured next to it, since "
        "this host's speed drifts within minutes. The node's and the echo node's "
        "joint-state threads run at "
        f"{label[deployed]} (dynamics_node's `thread_priority`, the echo node's `--priority`)"
        + (", and once each on the normal scheduler" if deployed else "")
        + "; the driver always on the normal scheduler.\n\n" + table +
        "\n\nCallback time inside the node, as the node reports it on /diagnostics "
        "(percentiles of its last 2000 callbacks, twice a second): the median over the run's "
        "reports; \"to the command\": the same for the part of each callback up to the "
        "command's publication (`command_p50_us`, `command_p99_us`; what follows it, the "
        "other outputs and a cross-check step, delays no command).\n\n"
        f"Targets. Backend rnea, {label[deployed]}, cross-check 1 Hz ({len(ours['windows'])} "
        f"reports, worst p99 {worst:.0f} µs, max {largest:.0f} µs): zero drops — {drops} "
        f"({verdict(drops == 0)}); callback p99 ≤ {TARGETS['callback_p99_us']:.0f} µs — "
        f"{p99:.0f} µs ({verdict(p99 <= TARGETS['callback_p99_us'])}; up to the command "
        f"{callback_percentiles(ours, 'command_windows')[1]:.0f} µs); end-to-end p50 ≤ "
        f"{TARGETS['latency_ratio']}× the echo's — {ratio:.2f}× "
        f"({verdict(ratio <= TARGETS['latency_ratio'])}). Latency p99 ≤ "
        f"{TARGETS['p99_ratio']}× the echo's:")
    for (process, backend, cross_check_rate, level, observer), r in runs.items():
        if process == "dynamics" and level == deployed and observer:
            p99_ratio = r["latency_p99"] / r["echo"]["latency_p99"]
            text += (f" {backend} at {cross_check_rate:g} Hz {p99_ratio:.2f}× "
                     f"({verdict(p99_ratio <= TARGETS['p99_ratio'])});")
    text = text.rstrip(";") + "."
    text += (f" The observer in the node (backend pinocchio, cross-check 1 Hz): callback p50 "
             f"{off[0]:.0f} → {on[0]:.0f} µs, p99 {off[1]:.0f} → {on[1]:.0f} µs (off → on; two "
             "runs, so this also holds their run-to-run spread).")
    text += (" The observer's own time in the running node (the controller times its update "
             "inside each callback; /diagnostics `observer_p50_us`, `observer_p99_us`, the "
             f"median over the run's reports), target ≤ {OBSERVER_TARGET_US:.0f} µs per joint "
             "state at the median:")
    for (process, backend, cross_check_rate, level, observer), r in runs.items():
        if process == "dynamics" and level == deployed and observer and cross_check_rate == 1:
            own = np.array(r["observer_windows"] or [(np.nan,) * 3])
            p50, p99 = float(np.median(own[:, 0])), float(np.median(own[:, 1]))
            text += (f" {backend} p50 {p50:.1f} µs, p99 {p99:.1f} µs "
                     f"({verdict(p50 <= OBSERVER_TARGET_US)});")
    text = text.rstrip(";") + "."
    if not deployed:
        text += (" SCHED_FIFO was not permitted to this run (no rtprio limit): only the normal "
                 "scheduler was measured.")
    return text
