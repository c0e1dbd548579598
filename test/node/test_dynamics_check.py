"""dynamics_check and the files it reads: JointState bytes against two serializers, bags
written here with mcap-ros2-support, velocities and accelerations against closed forms, the
residual against known offsets, YAML trajectories, and bad input answered with the reason."""

import math

import numpy as np
import pytest
import yaml
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

import robo_dynamics as rd
from robo_dynamics.cli import check
from robo_dynamics.control.trajectory import Trajectory
from robo_dynamics.control.trajectory_check import check_samples
from robo_dynamics.io import cdr_joint_state, joint_state_bag
from robo_dynamics.io.trajectory_yaml import trajectory_from_document
from bags import as_dict, write_bag
from conftest import SHIPPED

URDF = str(SHIPPED / "rd_ur5e.urdf")
ROBOT = rd.load_robot(URDF)
NAMES = list(ROBOT.joint_names)
PIN = rd.make_solver(ROBOT, "pinocchio")
Q0 = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])
AMPLITUDE = 0.5 * np.linspace(1.0, 0.4, 6)       # rad
W = 2.0 * np.pi * 0.5                            # rad/s
WINDOW = 0.02                                    # s, dynamics_check's default accel window
EPOCH = 1_700_000_000 * 10 ** 9                  # ns



def motion(t):
    """q, q̇ of the recorded motion, and q̈ as dynamics_check estimates it from q̇ sampled
    at `t` (the slope across ±WINDOW/2: −A w sin(w t) sin(w h) / h, h = WINDOW/2), closed
    forms; (N, 6) each."""
    s = np.sin(W * t)[:, None]
    h = 0.5 * WINDOW
    return (Q0 + AMPLITUDE * s, AMPLITUDE * W * np.cos(W * t)[:, None],
            -AMPLITUDE * W * s * math.sin(W * h) / h)


# -- JointState bytes -------------------------------------------------------------------------
CASES = [
    ([], [], [], [], ""),
    (["a"], [1.0], [], [], "x"),
    (["ab", "c"], [2.0, 3.0], [], [5.0, 6.0], "xyz"),
    (["joint_1", "j2", "long_joint_name_3"], [0.1, -0.2, 0.3], [1.0, 2.0, 3.0],
     [-4.0, 5.5, 1e-300], "base_link"),
    (["é"], [math.nan], [math.inf], [-0.0], "frame"),
]


@pytest.mark.parametrize("names, position, velocity, effort, frame_id", CASES)
@pytest.mark.parametrize("serializer", ["rclpy", "mcap-ros2-support"])
def test_joint_state_bytes_are_read_as_both_serializers_write_them(
        tmp_path, serializer, names, position, velocity, effort, frame_id):
    stamp = EPOCH + 123_456_789
    if serializer == "rclpy":
        msg = JointState(name=names, position=position, velocity=velocity, effort=effort)
        msg.header.frame_id = frame_id
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp // 10 ** 9, stamp % 10 ** 9
        data = serialize_message(msg)
    else:
        from mcap.reader import make_reader
        path = write_bag(tmp_path / "one.mcap", [(0, as_dict(stamp, names, position, velocity,
                                                                effort, frame_id))])
        with open(path, "rb") as stream:
            data = next(make_reader(stream).iter_messages())[2].data
    got_stamp, block, count, *arrays = cdr_joint_state.split(data)
    assert got_stamp == stamp and count == len(names)
    assert cdr_joint_state.names_of(block, count) == names
    for got, expected in zip(arrays, (position, velocity, effort)):
        np.testing.assert_array_equal(np.frombuffer(got, dtype="<f8"), expected)


def test_bytes_it_cannot_read_raise():
    data = serialize_message(JointState(name=["a", "b"], position=[1.0, 2.0]))
    with pytest.raises(ValueError, match="not little-endian"):
        cdr_joint_state.split(b"\x00\x00" + data[2:])
    with pytest.raises(ValueError, match="truncated JointState"):
        cdr_joint_state.split(data[:30])


# -- bags -----------------------------------------------------------------------------------------
def recorded(tmp_path, offsets, seconds=2.0, rate=1000.0, description=None, pin=PIN):
    """A bag of the motion at `rate` Hz with efforts = `pin`'s τ at the states
    dynamics_check sees (q, q̇, its q̈ estimate) + offsets; the gripper joint first, the arm
    joints reversed; `description` on /robot_description (None: not recorded). Returns
    (path, t, q, q̇, q̈ estimate, efforts)."""
    t = np.arange(int(seconds * rate) + 1) / rate
    q, qd, qdd = motion(t)
    tau = np.array([pin.inverse_dynamics(*x) for x in zip(q, qd, qdd)]) + offsets
    names = ["gripper_joint"] + NAMES[::-1]
    messages = []
    for k, stamp in enumerate(EPOCH + np.round(t * 1e9).astype(np.int64)):
        messages.append((int(stamp) + 50_000, as_dict(
            int(stamp), names, [0.01] + q[k, ::-1].tolist(), [0.0] + qd[k, ::-1].tolist(),
            [math.nan] + tau[k, ::-1].tolist())))
    path = write_bag(tmp_path / "arm.mcap", messages, description=description)
    return path, t, q, qd, qdd, tau


def test_a_bag_gives_the_states_in_model_order_and_their_derivatives(tmp_path):
    path, t, q, qd, qdd, tau = recorded(tmp_path, np.zeros(6))
    recording = joint_state_bag.read_joint_states(path, NAMES)
    assert recording.start_ns == EPOCH and recording.read == len(t)
    np.testing.assert_allclose(recording.times, t, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(recording.positions, q)
    np.testing.assert_array_equal(recording.velocities, qd)
    np.testing.assert_array_equal(recording.efforts, tau)
    assert recording.skipped == {}
    got_qd, got_qdd = joint_state_bag.derivatives(recording, WINDOW)
    h = int(round(0.5 * WINDOW * 1000))
    inside = slice(h, len(t) - h)                   # the window is cut at the ends
    np.testing.assert_allclose(got_qdd[inside], qdd[inside], rtol=0, atol=1e-9)
    at_start = AMPLITUDE * W * (math.cos(W * 0.5 * WINDOW) - 1.0) / (0.5 * WINDOW)
    np.testing.assert_allclose(got_qdd[0], at_start, rtol=0, atol=1e-9)   # half a window
    # without recorded velocities: central differences of q, second order in the step
    no_velocity = recording._replace(velocities=None)
    estimated, _ = joint_state_bag.derivatives(no_velocity, WINDOW)
    step = 1e-3
    bound = (AMPLITUDE * W ** 3 * step ** 2 / 6).max() * 1.01
    assert np.abs(estimated[1:-1] - qd[1:-1]).max() <= bound


def test_the_residual_is_what_the_model_leaves_out(tmp_path, capsys):
    offsets = np.array([1.5, -2.0, 0.5, 0.25, -0.125, 0.0625])      # N m, e.g. friction
    path, t, q, qd, qdd, tau = recorded(tmp_path, offsets)
    recording = joint_state_bag.read_joint_states(path, NAMES)
    est_qd, est_qdd = joint_state_bag.derivatives(recording, WINDOW)
    h = int(round(0.5 * WINDOW * 1000))
    inside = slice(h, len(t) - h)
    result = check_samples(rd.make_solver(ROBOT, "rnea"), recording.times[inside],
                           recording.positions[inside], est_qd[inside], est_qdd[inside],
                           ROBOT.effort_limit)
    np.testing.assert_allclose(recording.efforts[inside] - result.efforts,
                               np.broadcast_to(offsets, result.efforts.shape), atol=1e-9)
    png = tmp_path / "check.png"
    status = check.main([path, "--urdf", URDF, "--plot", str(png), "--quiet"])
    out = capsys.readouterr().out
    assert status == 0 and "within the limits at every sample" in out
    assert f"{len(t)} messages, {len(t)} states used" in out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()
            if line.split() and line.split()[0] in NAMES}
    for j, name in enumerate(NAMES):
        limit, peak, ratio, rms, worst = (float(v) for v in rows[name])
        assert limit == ROBOT.effort_limit[j]
        assert peak == pytest.approx(np.abs(result.efforts).max(axis=0)[j], rel=2e-3,
                                     abs=1e-3 + 2e-3 * np.abs(tau[:, j]).max())
        assert rms == pytest.approx(abs(offsets[j]), rel=0.05)  # the ends add a little
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_messages_are_skipped_and_counted_and_order_is_by_stamp(tmp_path):
    t = np.arange(12) * 1e-3
    q, qd, _ = motion(t)
    stamps = [EPOCH + k * 1_000_000 for k in range(12)]
    good = [(stamps[k], as_dict(stamps[k], NAMES, q[k], qd[k])) for k in range(12)]
    bad = [
        (EPOCH, as_dict(EPOCH + 500_000, NAMES, [math.nan] + q[0, 1:].tolist(), qd[0])),
        (EPOCH, as_dict(EPOCH + 600_000, NAMES, q[0], qd[0, :3])),        # short velocity
        (EPOCH, as_dict(EPOCH + 700_000, NAMES[:5], q[0, :5], qd[0, :5])),  # a joint missing
        (EPOCH, as_dict(stamps[4], NAMES, q[4], qd[4])),                  # a stamp again
    ]
    messages = good[6:] + bad + good[:6]                  # recorded out of order
    path = write_bag(tmp_path / "bad.mcap", messages)
    recording = joint_state_bag.read_joint_states(path, NAMES)
    assert recording.read == 16
    assert recording.skipped == {"positions or velocities that are not finite": 1,
                                 "arrays that do not match the names": 1,
                                 "without every chain joint (or with a name twice)": 1,
                                 "a stamp already seen": 1}
    np.testing.assert_array_equal(recording.positions, q)
    np.testing.assert_allclose(recording.times, t, atol=1e-12)
    assert recording.efforts is None


def test_a_joint_without_effort_keeps_its_states_and_has_no_residual(tmp_path, capsys):
    """A driver that publishes NaN for a joint it cannot sense: the states count, that
    joint's residual is '—', the others' are computed."""
    t = np.arange(50) * 1e-3
    q, qd, qdd = motion(t)
    tau = np.array([PIN.inverse_dynamics(*x) for x in zip(q, qd, qdd)])
    tau[:, 2] = np.nan
    stamps = [EPOCH + k * 1_000_000 for k in range(50)]
    path = write_bag(tmp_path / "nan.mcap", [(stamps[k], as_dict(stamps[k], NAMES, q[k], qd[k],
                                                                  tau[k])) for k in range(50)])
    recording = joint_state_bag.read_joint_states(path, NAMES)
    assert len(recording.times) == 50 and recording.skipped == {}
    assert np.isnan(recording.efforts[:, 2]).all() and np.isfinite(recording.efforts[:, 3]).all()
    assert check.main([path, "--urdf", URDF, "--quiet"]) == 0
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()
            if line.split() and line.split()[0] in NAMES}
    assert rows[NAMES[2]][-2:] == ["—", "—"] and rows[NAMES[3]][-1] != "—"


def test_a_rosbag2_directory_of_files_is_one_recording(tmp_path):
    t = np.arange(20) * 1e-3
    q, qd, _ = motion(t)
    stamps = [EPOCH + k * 1_000_000 for k in range(20)]
    folder = tmp_path / "bag"
    folder.mkdir()
    (folder / "metadata.yaml").write_text("rosbag2_bagfile_information: {}\n")
    for part, ks in enumerate((range(0, 10), range(10, 20))):
        write_bag(folder / f"bag_{part}.mcap",
                  [(stamps[k], as_dict(stamps[k], NAMES, q[k], qd[k])) for k in ks])
    recording = joint_state_bag.read_joint_states(str(folder), NAMES)
    np.testing.assert_array_equal(recording.positions, q)


# -- YAML -----------------------------------------------------------------------------------------
def test_yaml_trajectory_equals_the_same_points_given_directly():
    document = yaml.safe_load("""
trajectory:
  joint_names: [wrist_3_joint, wrist_2_joint, wrist_1_joint, elbow_joint,
                shoulder_lift_joint, shoulder_pan_joint]
  points:
    - positions: [0, 0, 0, 0, 0, 0]
      time_from_start: {sec: 0, nanosec: 0}
    - positions: [0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
      time_from_start: {sec: 1, nanosec: 500000000}
    - positions: [1, 1, 1, 1, 1, 1]
      time_from_start: 2.25
""")
    trajectory = trajectory_from_document(document, NAMES)
    reference = Trajectory(0.0, [0.0, 1.5, 2.25],
                           [[0.0] * 6, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [1.0] * 6])
    for t in np.linspace(0.0, 2.25, 31):
        for got, expected in zip(trajectory.sample(t), reference.sample(t)):
            np.testing.assert_array_equal(got, expected)


def test_the_command_line_checks_a_yaml_trajectory_and_says_how_much_slower(tmp_path, capsys):
    t = np.linspace(0.0, 0.5, 11)
    q, qd, _ = motion(t * 8)          # the bag's motion, eight times faster
    document = {"joint_names": NAMES, "points": [
        {"positions": q[k].tolist(), "velocities": (8 * qd[k]).tolist(),
         "time_from_start": float(t[k])} for k in range(len(t))]}
    path = tmp_path / "fast.yaml"
    path.write_text(yaml.safe_dump(document))
    status = check.main([str(path), "--urdf", URDF, "--margin", "0.5", "--quiet"])
    out = capsys.readouterr().out
    assert status == 1 and "BEYOND THE EFFORT LIMITS" in out and "slowed by" in out


@pytest.mark.parametrize("content, fragment", [
    ("joint_names: [a]\npoints: []\n", "missing ['shoulder_pan_joint'"),
    ("points: [{positions: [0, 0, 0, 0, 0, 0], time_from_start: 1},\n"
     "         {positions: [0, 0, 0, 0, 0, 0], time_from_start: 0.5}]\n", "strictly increasing"),
    ("points: [{positions: [.nan, 0, 0, 0, 0, 0], time_from_start: 1}]\n", "must be finite"),
    ("points: [{positions: [0, 0], time_from_start: 1}]\n", "every point needs 6 positions"),
    ("points: [{positions: [0, 0, 0, 0, 0, 0], time_from_start: soon}]\n",
     "points[0].time_from_start must be seconds"),
    ("points: [{positions: [0, 0, 0, 0, 0, 0], speed: 2}]\n", "unknown field(s) ['speed']"),
    ("[1, 2, 3]\n", "expected a mapping"),
    ("points: [{positions: [0, 0\n", "while parsing"),
])
def test_bad_yaml_is_refused_with_the_reason(tmp_path, capsys, content, fragment):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    assert check.main([str(path), "--urdf", URDF]) == 2
    err = capsys.readouterr().err
    assert fragment in err and str(path) in err, err


def test_bad_bags_are_refused_with_the_reason(tmp_path, capsys):
    string = write_bag(tmp_path / "string.mcap", [(EPOCH, {"data": "hello"})],
                       definition="string data\n", datatype="std_msgs/msg/String")
    other = write_bag(tmp_path / "other.mcap", [(EPOCH, as_dict(EPOCH, ["a"], [0.0]))])
    cases = [([string], "carries std_msgs/msg/String"),
             ([other, "--topic", "/nothing"], "no messages on '/nothing'"),
             ([other], "names every chain joint"),
             ([str(tmp_path / "missing.mcap")], "no such file or directory")]
    for argv, fragment in cases:
        assert check.main(argv + ["--urdf", URDF, "--quiet"]) == 2
        assert fragment in capsys.readouterr().err


def test_the_tools_take_the_arm_from_the_bag_and_never_guess_it(tmp_path, capsys):
    """A UR10's bag (the UR5e's joint names, as every UR arm has) with its /robot_description:
    without --urdf dynamics_check judges it against the UR10's limits and torques (Pinocchio
    on the UR10 URDF: the residual is zero). Without a description and without --urdf,
    both tools refuse with the reason, and a trajectory file always needs --urdf."""
    from robo_dynamics.cli import identify
    from conftest import ARMS, load_arm
    ur10 = load_arm("ur10")                      # skips, saying why, without the data
    ur10_path = ARMS["ur10"][0]
    assert list(ur10.joint_names) == NAMES and ur10.effort_limit[0] != ROBOT.effort_limit[0]
    path, t, q, qd, qdd, tau = recorded(tmp_path, np.zeros(6), description=ur10_path.read_text(),
                                        pin=rd.make_solver(ur10, "pinocchio"))
    assert check.main([path, "--tip", "tool0", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"robot 'ur10' (/robot_description of {path})" in out, out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()
            if line.split() and line.split()[0] in NAMES}
    for j, name in enumerate(NAMES):
        limit, peak, ratio, rms, worst = (float(v) for v in rows[name])
        assert limit == ur10.effort_limit[j]
        assert rms < 0.01 * np.abs(tau[:, j]).max() + 1e-3     # the UR10's own torques
    bare, *_ = recorded(tmp_path / "..", np.zeros(6))
    for tool, argv in ((check.main, [bare, "--quiet"]), (identify.main, [bare])):
        assert tool(argv) == 2
        assert "no --urdf, and" in capsys.readouterr().err
    trajectory = tmp_path / "t.yaml"
    trajectory.write_text("joint_names: [a]\npoints: [{positions: [0.0], time_from_start: 1.0}]\n")
    assert check.main([str(trajectory)]) == 2
    assert "no --urdf: give the arm's URDF" in capsys.readouterr().err


@pytest.mark.parametrize("tool", ["check", "identify"])
def test_help_shows_every_default(tool, capsys):
    from robo_dynamics.cli import identify
    main = check.main if tool == "check" else identify.main
    with pytest.raises(SystemExit):
        main(["--help"])
    options = capsys.readouterr().out.split("options:", 1)[1]
    for option in ("--urdf", "--topic", "--accel-window", "--base", "--tip"):
        block = options.split("\n  " + option, 1)[1].split("\n  -")[0]
        assert "(default:" in block, (option, block)
