"""The controller core's step per control mode: what each law costs dynamics_node's
joint-state callback (a warm loop on the Panda, one joint state at a time)."""

import numpy as np

from .library import stepper
from .measure import ARMS, per_call

MODES = ("gravity", "tracking", "cartesian_impedance", "cartesian_impedance + posture",
         "operational_space")


def mode_cost(rounds=5):
    """Rows (backend, then the median step [µs] per mode of MODES) for the Panda moving
    through one state (q̇ ≠ 0, efforts given, observer off): the modes timed in turn,
    round after round, the median of the rounds."""
    import robo_dynamics as rd
    path, tip = ARMS["Panda (7-DoF)"]
    model = rd.load_robot(path, tip_link=tip)
    q = np.array([0.1, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7])
    qd = np.array([0.1, -0.2, 0.3, 0.1, -0.1, 0.2, 0.3])
    from robo_dynamics.control.contact_safety import ContactLimit, monitored_points
    from robo_dynamics.control.safety_planes import planes_from
    elbow = monitored_points(model, ["panda_link4"], [0.0, 0.05, 0.0])
    watched = (ContactLimit(points=elbow, radii=(0.0, 0.06)),
               planes_from([0.0, 0.0, -0.5, 0.0, 0.0, 1.0]))     # a floor half a metre down
    rows = []
    for backend in rd.BACKENDS:
        solver = rd.make_solver(model, backend)
        effort = solver.gravity(q).tolist()
        for name, (contact, planes) in (
                (backend, (None, ())),
                (backend + ", power_force_limiting", (ContactLimit(), ())),
                (backend + ", power_force_limiting + an elbow sphere + a plane", watched)):
            steps = [stepper(controller(model, solver, mode, q, contact, planes),
                             list(model.joint_names), q.tolist(), qd.tolist(), effort)
                     for mode in MODES]
            times = np.array([[per_call(step, budget=0.1) * 1e6 for step in steps]
                              for _ in range(rounds)])
            rows.append((name, *(f"{t:.1f}" for t in np.median(times, axis=0))))
    return rows


def controller(model, solver, mode, q, contact=None, planes=()):
    """A Controller of `model` in `mode` at q (no bounds that could stop it; `contact`: the
    contact_safety.ContactLimit kept, or None; `planes`: safety planes). Tracking follows a 0.5 rad move of every
    joint in 0.3 s (that the limit slows)."""
    from robo_dynamics.control import cartesian
    from robo_dynamics.control.controller import Controller
    from robo_dynamics.control.joint_state_merger import JointStateMerger
    from robo_dynamics.control.settings import Settings
    from robo_dynamics.control.trajectory import Trajectory
    n, names = model.dof, list(model.joint_names)
    settings = Settings(
        kp=np.full(n, 100.0), kd=np.full(n, 20.0), effort_bound=model.effort_limit,
        max_torque_rate=np.full(n, 1e9), start_tolerance=np.full(n, 1.0),
        max_tracking_error=np.full(n, 10.0), velocity_bound=np.full(n, np.inf),
        hold_damping=None, stale_timeout=1e9, contact=contact, planes=planes)
    ctrl = Controller(solver, JointStateMerger(names, names), settings)
    for t in (0.0, 1e-3):                # a complete state and the control period
        ctrl.step(names, q.tolist(), [0.0] * n, [], t)
    if mode == "tracking":
        motion = Trajectory(0.0, [0.0, 0.3], [q, q + 0.5], np.zeros((2, n)))
    elif mode != "gravity":
        R, p = solver.tip_pose(q)
        law = mode.split(" ")[0]
        stiffness = np.diag([500.0] * 3 + [20.0] * 3 if law == cartesian.CARTESIAN_IMPEDANCE
                            else [100.0] * 6)
        motion = cartesian.CartesianTarget(
            law, R, p + 0.01, stiffness, 1.0, np.zeros(6),
            q + 0.05 if mode.endswith("posture") else None, np.full(n, 10.0),
            np.full(n, 5.0), 0.1, 0.5)
    if mode != "gravity":
        event = ctrl.desire(motion, 1e-3)
        assert ctrl.mode == mode.split(" ")[0], event.message
    return ctrl
