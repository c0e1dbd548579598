"""Benchmarks: in-house vs Pinocchio, and dynamics_node at 1 kHz. Not part of the tests.

    make bench            (= .venv/bin/python -m benchmarks.run)
    python -m benchmarks.run [--node-seconds 30] [--skip-node] [--output BENCHMARKS.md]

Prints each table and writes them all to BENCHMARKS.md. Every process that starts ROS here
runs on the loopback only, in a ROS domain of this run's own.
"""

import argparse
import functools
import os
import pathlib
import platform
import subprocess
import sys
import time

import numpy as np

from robo_dynamics.algorithms.chain_codegen import BATCH_CHUNK
from robo_dynamics.paths import example_robots
from robo_dynamics.ros.isolation import isolate

REPO = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE_ROBOTS = example_robots()
ARMS = {"rd_ur5e (6-DoF)": (REPO / "urdf" / "rd_ur5e.urdf", None),
        "Panda (7-DoF)": (EXAMPLE_ROBOTS / "panda_description/urdf/panda.urdf", "panda_hand_tcp")}
KEPT = "## Design measurements"    # this section of BENCHMARKS.md is written by hand and kept
PRIORITY = 50        # SCHED_FIFO priority of the node benchmark's real-time runs
SINGLE_TARGETS = {"rnea": 20.0, "mass matrix": 20.0, "J": 10.0, "Λ": 2.0,
                  "∂τ/∂q, ∂τ/∂q̇": 30.0}       # rnea backend's public call / Pinocchio's, Panda
OVERHEAD_TARGET_US = 2.0    # a public call minus the computation it wraps
OVERHEAD_ERROR = 0.25e-6    # s: rounds are added until the overhead is known this well
MAX_ROUNDS = 60
BATCH_TARGETS = {"rnea": 1.0 / 3.0, "mass matrix": 1.0, "Λ": 1.0,
                 "∂τ/∂q, ∂τ/∂q̇": 1.0}         # per state, in-house / Pinocchio loop
TARGETS = {"callback_p99_us": 250.0, "latency_ratio": 1.2, "p99_ratio": 1.3}
OBSERVER_TARGET_US = 30.0   # the external-torque observer's cost per joint state
CHECK_TARGET_MS = 20.0      # check_trajectory, 10 000 samples of a 7-DoF trajectory
BAG_TARGET_S = 60.0         # dynamics_check on a 10-minute bag of 1 kHz joint states
BAG_MESSAGES = 600_000


def per_call(function, budget=0.25, repeats=15):
    """Median seconds per call: `repeats` batches sized to ~budget/repeats each, after a
    warm-up."""
    for _ in range(50):
        function()
    start = time.perf_counter()
    count = 0
    while time.perf_counter() - start < 0.02:
        function()
        count += 1
    batch = max(1, int(count * (budget / repeats) / 0.02))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(batch):
            function()
        samples.append((time.perf_counter() - t0) / batch)
    return float(np.median(samples))


def observer_cost(rounds=7):
    """The controller core's step (gravity compensation of the Panda at rest, measured
    efforts given) with the momentum observer off and on, per backend: rows of the table.
    Off and on alternate over `rounds` rounds; the medians of each and of the rounds'
    differences (a paired measurement: the host's speed drifts between rounds)."""
    import robo_dynamics as rd
    from robo_dynamics.control.controller import Controller, Settings, default_hold_damping
    from robo_dynamics.control.joint_state_merger import JointStateMerger
    path, tip = ARMS["Panda (7-DoF)"]
    model = rd.load_robot(path, tip_link=tip)
    n, names = model.dof, list(model.joint_names)
    q = [0.1, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7]
    qd = [0.1, -0.2, 0.3, 0.1, -0.1, 0.2, 0.3]
    rows = []
    for backend in rd.BACKENDS:
        solver = rd.make_solver(model, backend)
        effort = solver.gravity(np.array(q)).tolist()
        steps = {}
        for observer in (False, True):
            settings = Settings(
                kp=np.full(n, 100.0), kd=np.full(n, 20.0), effort_bound=model.effort_limit,
                max_torque_rate=np.full(n, 1e9), start_tolerance=np.full(n, 0.01),
                max_tracking_error=np.full(n, 0.25), velocity_bound=np.full(n, np.inf),
                hold_damping=default_hold_damping(solver), stale_timeout=1e9,
                observer_gain=np.full(n, 50.0) if observer else None,
                contact_threshold=np.full(n, 1e9), collision_threshold=np.full(n, 1e9))
            steps[observer] = stepper(Controller(solver, JointStateMerger(names, names),
                                                 settings), names, q, qd, effort)
        times = np.array([[per_call(steps[observer], budget=0.1) * 1e6
                           for observer in (False, True)] for _ in range(rounds)])
        off, on = np.median(times, axis=0)
        rows.append((backend, f"{off:.1f}", f"{on:.1f}",
                     f"{np.median(times[:, 1] - times[:, 0]):.1f}"))
    return rows


def stepper(controller, names, q, qd, effort):
    """A function that gives `controller` the same joint state 1 ms after the last."""
    clock = [0.0]

    def step():
        clock[0] += 1e-3
        controller.step(names, q, qd, effort, clock[0], clock[0])
    return step


def trajectory_check_cost():
    """check_trajectory on 10 001 samples (10 s at 1 ms) of a 7-DoF Panda trajectory, with
    each backend, against the same torques and gravity from Pinocchio called in a Python
    loop: rows (what, ms, × the loop)."""
    import pinocchio as pin

    import robo_dynamics as rd
    from robo_dynamics.control.trajectory import Trajectory
    from robo_dynamics.control.trajectory_check import check_trajectory
    path, tip = ARMS["Panda (7-DoF)"]
    model = rd.load_robot(path, tip_link=tip)
    t = np.linspace(0.0, 10.0, 101)
    shape = np.linspace(1.0, 0.4, model.dof)
    q0 = np.array([0.1, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7])
    trajectory = Trajectory(0.0, t, q0 + 0.3 * np.sin(t)[:, None] * shape,
                            0.3 * np.cos(t)[:, None] * shape, -0.3 * np.sin(t)[:, None] * shape)
    reference = rd.make_solver(model, "pinocchio")
    pm, data = reference.pin_model, reference.pin_model.createData()
    times = np.arange(10_001) * 1e-3
    q, qd, qdd = trajectory.sample_many(times)

    def pinocchio_loop():
        for i in range(len(times)):
            pin.rnea(pm, data, q[i], qd[i], qdd[i])
            pin.computeGeneralizedGravity(pm, data, q[i])
    loop = min(_timed(pinocchio_loop) for _ in range(3)) * 1e3
    rows = [("Pinocchio loop (rnea + gravity per sample)", f"{loop:.1f}", "1.00×")]
    # the same path twenty times faster, sampled twenty times as often: beyond the limits,
    # so the check also computes g(q) and the time scale
    fast = Trajectory(0.0, t / 20, trajectory.positions, trajectory.velocities * 20,
                      trajectory.accelerations * 400)
    for backend in rd.BACKENDS:
        solver = rd.make_solver(model, backend)
        for what, path, period in (("fits as timed", trajectory, 1e-3),
                                   ("beyond the limits: time scale", fast, 5e-5)):
            result = check_trajectory(solver, path, model.effort_limit, period)
            assert len(result.times) == 10_001 and result.feasible == (path is trajectory)
            ms = min(_timed(lambda: check_trajectory(solver, path, model.effort_limit,
                                                       sample_period=period))
                     for _ in range(5)) * 1e3
            rows.append((f"check_trajectory, backend {backend}, {what}", f"{ms:.1f}",
                         f"{ms / loop:.2f}×"))
    return rows


def write_joint_state_bag(path, count):
    """An MCAP bag like `ros2 bag record -s mcap /joint_states` of a Panda at 1 kHz: `count`
    messages of 9 joints (7 arm + 2 fingers) with positions, velocities and efforts,
    serialized by rclpy, zstd chunks."""
    from mcap.writer import CompressionType, Writer
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    names = [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1",
                                                          "panda_finger_joint2"]
    t = np.arange(count) * 1e-3
    shape = np.append(np.linspace(1.0, 0.4, 7), [0.0, 0.0])
    q0 = np.array([0.1, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7, 0.02, 0.02])
    q = (q0 + 0.3 * np.sin(t)[:, None] * shape).tolist()
    qd = (0.3 * np.cos(t)[:, None] * shape).tolist()
    effort = (5.0 * np.sin(t)[:, None] * shape).tolist()
    msg = JointState(name=names)
    with open(path, "wb") as stream:
        writer = Writer(stream, compression=CompressionType.ZSTD)
        writer.start(profile="ros2", library="robo_dynamics benchmark")
        schema = writer.register_schema("sensor_msgs/msg/JointState", "ros2msg", b"")
        channel = writer.register_channel("/joint_states", "cdr", schema)
        start = time.time_ns()
        for k in range(count):
            stamp = start + k * 1_000_000
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
            msg.position, msg.velocity, msg.effort = q[k], qd[k], effort[k]
            writer.add_message(channel, stamp, serialize_message(msg), stamp, k)
        writer.finish()


def bag_check_cost(count=BAG_MESSAGES):
    """dynamics_check on a bag of `count` Panda joint states (1 kHz): (rows (what, s), bag
    size [MB]); the command as a user runs it (table and PNG) first, then its stages."""
    import contextlib
    import io
    import tempfile

    import robo_dynamics as rd
    from robo_dynamics import check
    from robo_dynamics.control.trajectory_check import check_samples
    from robo_dynamics.io import joint_state_bag
    path, tip = ARMS["Panda (7-DoF)"]
    model = rd.load_robot(path, tip_link=tip)
    solver = rd.make_solver(model, "rnea")
    with tempfile.TemporaryDirectory() as folder:
        bag, png = os.path.join(folder, "joint_states.mcap"), os.path.join(folder, "check.png")
        write_joint_state_bag(bag, count)
        size = os.path.getsize(bag) / 1e6
        argv = [bag, "--urdf", str(path), "--tip", tip, "--plot", png, "--quiet"]
        with contextlib.redirect_stdout(io.StringIO()):
            total = _timed(lambda: check.main(argv))
        t0 = time.perf_counter()
        recording = joint_state_bag.read_joint_states(bag, model.joint_names)
        t1 = time.perf_counter()
        qd, qdd = joint_state_bag.derivatives(recording)
        t2 = time.perf_counter()
        result = check_samples(solver, recording.times, recording.positions, qd, qdd,
                               model.effort_limit)
        t3 = time.perf_counter()
        check.plot(png, model.joint_names, result, recording.efforts)
        t4 = time.perf_counter()
    stages = [("reading the bag (mcap, JointState bytes, sorting)", t1 - t0),
              ("velocities and accelerations", t2 - t1),
              ("effort check (batched inverse dynamics, rnea)", t3 - t2),
              ("PNG (min/max envelopes)", t4 - t3)]
    rows = [("`dynamics_check BAG --plot PNG` (whole command, in-process)", f"{total:.1f}")]
    rows += [(f"  {what}", f"{seconds:.2f}") for what, seconds in stages]
    return rows, size


def interleaved(calls, rounds=15, budget=0.04):
    """Seconds per call, (rounds, len(calls)): the calls timed in turn in each round, so a
    difference between two columns of one row is a paired measurement (the host's speed
    drifts between rounds, not within one)."""
    return np.array([[per_call(call, budget=budget, repeats=3) for call in calls]
                     for _ in range(rounds)])


def median_error(differences):
    """Standard error of the median of each column (1.25 σ / √N, σ from the median absolute
    deviation): how well a paired difference is known."""
    deviation = np.median(np.abs(differences - np.median(differences, axis=0)), axis=0)
    return 1.2533 * 1.4826 * deviation / np.sqrt(len(differences))


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def arms():
    """(arm label, model, rnea solver, Pinocchio model, a fresh Pinocchio data, tip frame id)
    for each benchmarked arm. Their Pinocchio configuration is ours (no continuous joints;
    the Panda's fingers locked, as the Pinocchio backend does), so Pinocchio is called with
    the same arrays."""
    import pinocchio as pin

    import robo_dynamics as rd
    for arm, (path, tip) in ARMS.items():
        model = rd.load_robot(path, tip_link=tip)
        pm = rd.make_solver(model, "pinocchio").pin_model    # joints off the chain locked
        assert pm.nq == pm.nv == model.dof, f"{arm}: Pinocchio's q is not ours"
        frame = pm.getFrameId(model.tip_link, pin.BODY)
        yield arm, model, rd.make_solver(model, "rnea"), pm, pm.createData(), frame


def pin_lambda(pm, data, frame):
    """Pinocchio's Λ for one state as a user writes it: computeMinverse (both triangles
    filled), the frame Jacobian, a NumPy inverse."""
    import pinocchio as pin

    def call(q):
        M_inv = pin.computeMinverse(pm, data, q)
        J = pin.computeFrameJacobian(pm, data, q, frame, pin.LOCAL_WORLD_ALIGNED)
        return np.linalg.inv(J @ M_inv @ J.T)
    return call


def single_calls():
    """Per arm and quantity: Pinocchio's plain call, then each backend's public call (what a
    user writes: `solver.inverse_dynamics(q, qd, qdd)`, arguments checked) and the same
    backend's computation without the checks (its hook): rows of the single-call table and
    of the overhead table."""
    import pinocchio as pin

    import robo_dynamics as rd
    from robo_dynamics.algorithms import rnea
    rows, overhead = [], []
    for arm, model, ours, pm, data, frame in arms():
        rng = np.random.default_rng(0)
        q, qd, qdd = rng.uniform(-1, 1, (3, model.dof))
        solvers = {"rnea": ours, "pinocchio": rd.make_solver(model, "pinocchio")}
        theirs_lambda = pin_lambda(pm, data, frame)
        cases = [   # quantity, Pinocchio's call, public method, hook, arguments
            ("rnea", lambda: pin.rnea(pm, data, q, qd, qdd), "inverse_dynamics",
             "inverse_dynamics_unchecked", (q, qd, qdd)),
            ("gravity", lambda: pin.computeGeneralizedGravity(pm, data, q), "gravity",
             "gravity_unchecked", (q,)),
            ("mass matrix", lambda: pin.crba(pm, data, q), "mass_matrix",
             "mass_matrix_unchecked", (q,)),
            ("J", lambda: pin.computeFrameJacobian(pm, data, q, frame,
                                                   pin.LOCAL_WORLD_ALIGNED),
             "jacobian", "jacobian_unchecked", (q,)),
            ("Λ", lambda: theirs_lambda(q), "operational_space_inertia",
             "operational_space_inertia_unchecked", (q,)),
            ("∂τ/∂q, ∂τ/∂q̇", lambda: pin.computeRNEADerivatives(pm, data, q, qd, qdd),
             "rnea_derivatives", "_rnea_derivatives", (q, qd, qdd)),
        ]
        for name, theirs, public, hook, args in cases:
            calls = [theirs]
            for solver in solvers.values():
                calls += [functools.partial(getattr(solver, public), *args),
                          functools.partial(getattr(solver, hook), *args)]
            times = interleaved(calls)          # Pinocchio, then (public, hook) per backend
            while (len(times) < MAX_ROUNDS
                   and max(median_error(times[:, 1::2] - times[:, 2::2])) > OVERHEAD_ERROR):
                times = np.vstack((times, interleaved(calls, rounds=5)))   # a long call
            error = dict(zip(solvers, median_error(times[:, 1::2] - times[:, 2::2])))
            t_pin = np.median(times[:, 0])
            public_times = dict(zip(solvers, np.median(times[:, 1::2], axis=0)))
            added = dict(zip(solvers, np.median(times[:, 1::2] - times[:, 2::2], axis=0)))
            rows.append((arm, name, f"{t_pin * 1e6:.2f}",
                         f"{public_times['pinocchio'] * 1e6:.2f}",
                         f"{public_times['rnea'] * 1e6:.1f}",
                         f"{public_times['rnea'] / t_pin:.1f}×"))
            overhead.append((arm, name) + tuple(
                f"{added[b] * 1e6:.2f} ± {error[b] * 1e6:.2f}" for b in solvers) + (len(times),))
        t_pin = per_call(lambda: pin.rnea(pm, data, q, qd, qdd))
        t_numpy = per_call(lambda: rnea.rnea(model, q, qd, qdd))
        rows.append((arm, "rnea, `algorithms.rnea.rnea` (vectorised NumPy)", f"{t_pin * 1e6:.2f}",
                     "", f"{t_numpy * 1e6:.1f}", f"{t_numpy / t_pin:.1f}×"))
    return rows, overhead


def batched(count=10_000):
    import pinocchio as pin

    rows = []
    for arm, model, ours, pm, data, frame in arms():
        rng = np.random.default_rng(1)
        Q, QD, QDD = rng.uniform(-1, 1, (3, count, model.dof))
        theirs_lambda = pin_lambda(pm, data, frame)

        def loop(function, *arrays):
            def run():
                for i in range(count):
                    function(*(x[i] for x in arrays))
            return run

        for name, ours_call, theirs in (
                ("rnea", lambda: ours.inverse_dynamics_batch(Q, QD, QDD),
                 loop(lambda *x: pin.rnea(pm, data, *x), Q, QD, QDD)),
                ("gravity", lambda: ours.gravity_batch(Q),
                 loop(lambda x: pin.computeGeneralizedGravity(pm, data, x), Q)),
                ("mass matrix", lambda: ours.mass_matrix_batch(Q),
                 loop(lambda x: pin.crba(pm, data, x), Q)),
                ("Λ", lambda: ours.operational_space_inertia_batch(Q), loop(theirs_lambda, Q)),
                ("∂τ/∂q, ∂τ/∂q̇", lambda: ours.rnea_derivatives_batch(Q, QD, QDD),
                 loop(lambda *x: pin.computeRNEADerivatives(pm, data, *x), Q, QD, QDD))):
            repeats = 5 if name in ("rnea", "gravity") else 3
            t_ours = min(_timed(ours_call) for _ in range(repeats)) / count
            t_pin = min(_timed(theirs) for _ in range(repeats)) / count
            rows.append((arm, name, count, f"{t_ours * 1e6:.2f}", f"{t_pin * 1e6:.2f}",
                         f"{t_ours / t_pin:.2f}"))
    return rows


def _timed(function):
    t0 = time.perf_counter()
    function()
    return time.perf_counter() - t0


def process_stats(pid):
    """(CPU seconds used, resident memory in MiB) of a process, from /proc."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = 0.0
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024.0
    return cpu, rss


def drive(command, out_topic, seconds, rate, names, positions, set_point=None, effort=None,
          listen=()):
    """Start `command`, publish JointState (with `effort`, the measured torques) at `rate`
    for `seconds`, and measure. listen: (message type, topic) of further outputs to
    subscribe to (received and dropped)."""

    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from robo_dynamics.ros.demo.supervisor import stop_processes
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
        msg.header.stamp = now.to_msg()
        pub.publish(msg)
        sent[0] += 1
        if measuring[0]:
            sent_stamps.add(now.nanoseconds)

    try:
        deadline = time.monotonic() + 30.0            # wait until the node answers
        # until the node answers (and, with a set-point, tracks it: computed torque is timed)
        while received[0] == 0 or (set_point is not None
                                   and diagnostics.get("mode") != "tracking"):
            publish()
            executor.spin_once(timeout_sec=0.01)
            if set_point is not None:
                set_point_pub.publish(set_point)
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"{command[2]} did not answer")
        executor.spin_once(timeout_sec=0.5)
        received[0], latencies[:], sent[0] = 0, [], 0
        measuring[0] = True
        cpu0, _ = process_stats(process.pid)
        timer = node.create_timer(1.0 / rate, publish)
        start = time.monotonic()
        rss_start = process_stats(process.pid)[1]
        while time.monotonic() - start < seconds:
            executor.spin_once(timeout_sec=0.01)
        node.destroy_timer(timer)
        elapsed = time.monotonic() - start
        sent_during = len(sent_stamps)
        end_wait = time.monotonic() + 1.5              # collect the last outputs and diagnostics
        while time.monotonic() < end_wait:
            executor.spin_once(timeout_sec=0.01)
        cpu1, rss_end = process_stats(process.pid)
    finally:
        stop_processes([process])
        executor.shutdown()
        node.destroy_node()
    lat = np.array(latencies)
    return {"sent": sent_during, "received": len(answered), "elapsed": elapsed,
            "latency_p50": float(np.percentile(lat, 50)) if lat.size else float("nan"),
            "latency_p99": float(np.percentile(lat, 99)) if lat.size else float("nan"),
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
    from robo_dynamics.ros.joint_state_thread import fifo_permitted
    from robo_dynamics_interfaces.msg import OperationalSpaceInertia
    path, tip = ARMS["Panda (7-DoF)"]
    model = rd.load_robot(path, tip_link=tip)
    names = list(model.joint_names)
    q0 = np.array([0.1, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7])
    set_point = JointState(name=names, position=(q0 + 0.005).tolist())   # within tolerance
    effort = rd.make_solver(model, "pinocchio").gravity(q0)    # measured: holding still
    dynamics = [sys.executable, "-m", "robo_dynamics.ros.dynamics_node", "--ros-args",
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
    from robo_dynamics.ros.demo.supervisor import stop_processes
    from robo_dynamics.ros.joint_state_thread import fifo_permitted
    path, tip = ARMS["Panda (7-DoF)"]
    model = rd.load_robot(path, tip_link=tip)
    names = list(model.joint_names)
    q0 = np.array([0.1, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7])
    set_point = JointState(name=names, position=(q0 + 0.005).tolist())
    effort = rd.make_solver(model, "pinocchio").gravity(q0)
    level = priority if fifo_permitted(priority) else 0
    command = [sys.executable, "-m", "robo_dynamics.ros.dynamics_node", "--ros-args",
               "--log-level", "warn", "-p", f"robot_description_file:={path}",
               "-p", f"tip_link:={tip}", "-p", "marker_rate:=0.0", "-p", "diagnostics_rate:=2.0",
               "-p", f"thread_priority:={level}", "-p", "observer_gain:=[50.0]"]
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


def verdicts(rows, targets, column, arm, what):
    """'Targets (…): quantity ≤ x — measured y (met)' for each target, from table rows
    (ratio in `column`; the worst over arms whose label starts with `arm`)."""
    parts = []
    for quantity, target in targets.items():
        ratios = [float(str(r[column]).rstrip("×")) for r in rows
                  if r[1] == quantity and r[0].startswith(arm)]
        worst = max(ratios)
        parts.append(f"{quantity} ≤ {target:.2g} — {worst:.2f} "
                     + ("(met)" if worst <= target else "(**not met**)"))
    return f"Targets ({what}): " + "; ".join(parts) + "."


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node-seconds", type=float, default=30.0)
    parser.add_argument("--skip-node", action="store_true")
    parser.add_argument("--output", default=str(REPO / "BENCHMARKS.md"))
    args = parser.parse_args(argv)
    isolate()
    sections = [f"# Benchmarks\n\nMeasured by `make bench` (`python -m benchmarks.run`) on "
                f"{platform.machine()}, {os.cpu_count()} cores, Python "
                f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}. In-house and "
                "Pinocchio side by side in one process, same states; medians after warm-up."]

    print("1. single calls ...", flush=True)
    rows, overhead = single_calls()
    table = markdown_table(("arm", "quantity", "Pinocchio [µs]", "pinocchio backend [µs]",
                            "rnea backend [µs]", "rnea / Pinocchio"), rows)
    sections.append("## 1. Single call\n\nThe call a user makes, one state: each backend's "
                    "public method (`solver.inverse_dynamics(q, qd, qdd)`, `gravity(q)`, "
                    "`mass_matrix(q)`, `jacobian(q)`, `operational_space_inertia(q)`, "
                    "`rnea_derivatives(q, qd, qdd)`; float64 arrays, checked on the way in) "
                    "against Pinocchio's own Python call on the same arrays (Λ: "
                    "computeMinverse + computeFrameJacobian + `np.linalg.inv(J M⁻¹ Jᵀ)`; ours "
                    "also bounds Λ near singularities, see algorithms/operational_space.py). "
                    "The rnea backend runs the code generated for the arm; the last row of "
                    "each arm is the vectorised NumPy RNEA it is generated from.\n\n" + table
                    + "\n\n" + verdicts(rows, SINGLE_TARGETS, 5, "Panda",
                                         "rnea backend × Pinocchio on the Panda"))
    print(sections[-1], flush=True)
    worst = max(float(cell.split(" ± ")[0]) for row in overhead for cell in row[2:4])
    sections.append(
        "## 1a. What the public call adds\n\nPublic call minus the same backend's "
        "computation without argument checks (`*_unchecked`, the fast path the node uses on "
        "states it has checked once), per call, µs: the checks (type, shape, finiteness of "
        "each argument) and the call itself. Timed in turn with the calls of section 1, "
        "round after round; the median of the rounds' differences ± its standard error "
        f"(rounds added, up to {MAX_ROUNDS}, until it is ≤ {OVERHEAD_ERROR * 1e6:.2f} µs: a "
        "130 µs call drifts by more than the checks cost within a round).\n\n"
        + markdown_table(("arm", "quantity", "rnea backend [µs]", "pinocchio backend [µs]",
                          "rounds"), overhead)
        + f"\n\nTarget: ≤ {OVERHEAD_TARGET_US:.0f} µs per call — worst {worst:.2f} µs "
        + ("(met)." if worst <= OVERHEAD_TARGET_US else "(**not met**)."))
    print(sections[-1], flush=True)

    print("1b. the external-torque observer ...", flush=True)
    rows = observer_cost()
    sections.append(
        "## 1b. The external-torque observer\n\nThe controller core's step for one joint "
        "state of the Panda (gravity compensation, efforts given), without and with the "
        "momentum observer (p = M q̇, β = g − Cᵀ q̇, the residual and the contact levels): "
        "what the observer adds to dynamics_node's joint-state callback (a warm loop: its "
        "time inside the running node is in section 3).\n\n"
        + markdown_table(("backend", "step, observer off [µs]", "step, observer on [µs]",
                          "observer [µs]"), rows)
        + f"\n\nTarget: observer ≤ {OBSERVER_TARGET_US:.0f} µs per joint state — "
        + "; ".join(f"{row[0]} {row[3]} µs ("
                    + ("met" if float(row[3]) <= OBSERVER_TARGET_US else "**not met**") + ")"
                    for row in rows) + ".")
    print(sections[-1], flush=True)

    print("2. batched ...", flush=True)
    rows = batched()
    table = markdown_table(("arm", "quantity", "N", "in-house per state [µs]",
                            "Pinocchio loop per state [µs]", "ratio"), rows)
    sections.append("## 2. Batched\n\nIn-house: the rnea backend's batched methods "
                    "(inverse_dynamics_batch, gravity_batch, mass_matrix_batch, "
                    "operational_space_inertia_batch, rnea_derivatives_batch: the generated "
                    f"code run on NumPy arrays of states, in chunks of {BATCH_CHUNK}; Λ by "
                    "batched NumPy linear algebra) vs Pinocchio called in a Python loop. Best "
                    "of 3–5 runs each.\n\n" + table + "\n\n"
                    + verdicts(rows, BATCH_TARGETS, 5, "", "× the Pinocchio loop per state, "
                               "worst arm"))
    print(sections[-1], flush=True)

    print("2b. trajectory check ...", flush=True)
    rows = trajectory_check_cost()
    best = max(float(row[1]) for row in rows if "backend rnea" in row[0])   # its worst case
    sections.append(
        "## 2b. Trajectory check\n\n`check_trajectory` (control/trajectory_check.py) on "
        "10 001 samples of a 7-DoF Panda trajectory (10 s at 1 ms; and the same path twenty "
        "times faster, 0.5 s at 0.05 ms, beyond the limits): sampling the spline, batched "
        "inverse dynamics, limits, first violation, and when beyond them g(q) and the time "
        "scale. Against Pinocchio called per sample for the torques and gravity. Best of "
        "3–5 runs.\n\n"
        + markdown_table(("what", "time [ms]", "× the loop"), rows)
        + f"\n\nTarget: ≤ {CHECK_TARGET_MS:.0f} ms — {best:.1f} ms (rnea, the slower case) "
        + ("(met)." if best <= CHECK_TARGET_MS else "(**not met**)."))
    print(sections[-1], flush=True)

    print("2c. bag analysis ...", flush=True)
    rows, size = bag_check_cost()
    total = float(rows[0][1])
    sections.append(
        f"## 2c. Bag analysis\n\n`dynamics_check` on a bag of {BAG_MESSAGES} joint states (10 "
        f"minutes at 1 kHz; Panda, 9 joints with positions, velocities and efforts; MCAP "
        f"with zstd chunks, {size:.0f} MB, written by rclpy's serializer): read, "
        "accelerations, effort check of every state, per-joint table with the residual, PNG. "
        "One run.\n\n" + markdown_table(("what", "time [s]"), rows)
        + f"\n\nTarget: ≤ {BAG_TARGET_S:.0f} s — {total:.1f} s "
        + ("(met)." if total <= BAG_TARGET_S else "(**not met**)."))
    print(sections[-1], flush=True)

    if not args.skip_node:
        print(f"3. node at 1 kHz, {args.node_seconds:.0f} s per run (dynamics_node with "
              f"each backend and cross-check rate, echo; SCHED_FIFO {PRIORITY} and normal "
              "scheduler) ...", flush=True)
        runs = node_benchmark(args.node_seconds)
        sections.append(node_section(runs, args.node_seconds, PRIORITY))
        print(sections[-1], flush=True)

        print("3b. node at 1 kHz while trajectories are checked ...", flush=True)
        rows, level = check_load_benchmark(args.node_seconds)
        sections.append(
            "## 3b. Commands while trajectories are checked\n\ndynamics_node on the Panda at "
            f"1 kHz for {args.node_seconds:.0f} s (Pinocchio, cross-check 1 Hz, observer on, "
            + (f"joint-state thread SCHED_FIFO {level}" if level else "normal scheduler")
            + "), alone and while `benchmarks/check_client.py`, another process, calls "
            "`~/check_trajectory` every 0.5 s with a 10 s trajectory (10 001 samples; the "
            "node checks on its background thread at nice +10). Latency: joint state "
            "published → commanded torques received, µs; callback max: the largest "
            "joint-state callback time the node reported on /diagnostics, µs.\n\n"
            + markdown_table(("run", "drops", "latency p50", "latency p99", "callback max",
                              "checks × median round trip"), rows))
        print(sections[-1], flush=True)

    output = pathlib.Path(args.output)
    kept = output.read_text().partition(KEPT)[2] if output.is_file() else ""
    sections.append(KEPT + kept.rstrip("\n") if kept else "")
    output.write_text("\n\n".join(s for s in sections if s) + "\n")
    print(f"written: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
