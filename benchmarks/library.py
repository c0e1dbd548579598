"""The library's benchmarks: single calls against Pinocchio's, what the public call adds,
batches, the controller's step with the observer, the trajectory check, a bag's analysis."""

import functools
import os
import time

import numpy as np

from .measure import ARMS, arms, interleaved, median_error, per_call, pin_lambda, timed

OVERHEAD_ERROR = 0.25e-6    # s: rounds are added until the overhead is known this well
MAX_ROUNDS = 60
BAG_MESSAGES = 600_000


def single_calls():
    """Per arm and quantity: Pinocchio's plain call, then each backend's public call (what a
    user writes: `solver.inverse_dynamics(q, qd, qdd)`, arguments checked) and the same
    backend's computation without the checks (solver.unchecked): rows of the single-call table and
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
        cases = [   # quantity, Pinocchio's call, the method (public and unchecked), arguments
            ("rnea", lambda: pin.rnea(pm, data, q, qd, qdd), "inverse_dynamics", (q, qd, qdd)),
            ("gravity", lambda: pin.computeGeneralizedGravity(pm, data, q), "gravity", (q,)),
            ("mass matrix", lambda: pin.crba(pm, data, q), "mass_matrix", (q,)),
            ("J", lambda: pin.computeFrameJacobian(pm, data, q, frame,
                                                   pin.LOCAL_WORLD_ALIGNED), "jacobian", (q,)),
            ("Λ", lambda: theirs_lambda(q), "operational_space_inertia", (q,)),
            ("∂τ/∂q, ∂τ/∂q̇", lambda: pin.computeRNEADerivatives(pm, data, q, qd, qdd),
             "inverse_dynamics_derivatives", (q, qd, qdd)),
        ]
        for name, theirs, method, args in cases:
            calls = [theirs]
            for solver in solvers.values():
                calls += [functools.partial(getattr(solver, method), *args),
                          functools.partial(getattr(solver.unchecked, method), *args)]
            times = interleaved(calls)      # Pinocchio, then (public, unchecked) per backend
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
                ("∂τ/∂q, ∂τ/∂q̇", lambda: ours.inverse_dynamics_derivatives_batch(Q, QD, QDD),
                 loop(lambda *x: pin.computeRNEADerivatives(pm, data, *x), Q, QD, QDD))):
            repeats = 5 if name in ("rnea", "gravity") else 3
            t_ours = min(timed(ours_call) for _ in range(repeats)) / count
            t_pin = min(timed(theirs) for _ in range(repeats)) / count
            rows.append((arm, name, count, f"{t_ours * 1e6:.2f}", f"{t_pin * 1e6:.2f}",
                         f"{t_ours / t_pin:.2f}"))
    return rows


def observer_cost(rounds=7):
    """The controller core's step (gravity compensation of the Panda at rest, measured
    efforts given) with the momentum observer off and on, per backend: rows of the table.
    Off and on alternate over `rounds` rounds; the medians of each and of the rounds'
    differences (a paired measurement: the host's speed drifts between rounds)."""
    import robo_dynamics as rd
    from robo_dynamics.control.controller import Controller
    from robo_dynamics.control.settings import Settings
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
                hold_damping=None, stale_timeout=1e9,
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
    loop = min(timed(pinocchio_loop) for _ in range(3)) * 1e3
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
            ms = min(timed(lambda: check_trajectory(solver, path, model.effort_limit,
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
    from robo_dynamics.cli import check
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
            total = timed(lambda: check.main(argv))
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
