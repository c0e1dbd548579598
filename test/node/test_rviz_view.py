"""What a user sees in rviz2 (issue 62), rendered headless from the node's markers
(support/rviz_view.py: the URDF's visuals and the MarkerArray placed by the arm's
kinematics, projected along the default view of the config the launch file generates):
the arm drawn, every marker in a frame of the arm, sizes in proportion to the arm, labels
that do not overlap each other or the arm, and no colour repeated at the tip."""

import numpy as np
import pytest

from conftest import REPO
from node_harness import NAMES, Q, QD, REF, backend, harness, ros_context  # noqa: F401
from rviz_view import VIEWS, View, shipped_view
from robo_dynamics.ros.dynamics_node.markers import quaternion_from_matrix


def segment_box_distance(a, b, box, samples=50):
    """[m] the least distance from the projected segment a–b to the box (0 inside)."""
    x0, y0, x1, y1 = box
    points = a + np.linspace(0.0, 1.0, samples)[:, None] * (b - a)
    dx = np.maximum(np.maximum(x0 - points[:, 0], points[:, 0] - x1), 0.0)
    dy = np.maximum(np.maximum(y0 - points[:, 1], points[:, 1] - y1), 0.0)
    return float(np.min(np.hypot(dx, dy)))


def overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def check(view, tip):
    """The properties every default view must have; tip: the tool's position [m]."""
    links = {link for link in view.tree.link_frames} | {view.tree.base_link}
    assert view.segments(), "the arm has no visuals"
    reach = view.scale.reach
    for d in view.drawn:
        assert reach / 200.0 <= d.extent <= reach, (d.ns, d.extent, reach)
    texts = [d for d in view.drawn if d.text]
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            assert not overlap(a.box, b.box), (a.ns, b.ns)
        for start, end, radius in view.segments():
            gap = segment_box_distance(view.project(start), view.project(end), a.box)
            assert gap > radius, (a.ns, gap, radius)
    near = [d.colour for d in view.drawn if not d.text
            and np.linalg.norm(d.position - tip) < reach / 10.0 and d.ns != "centre_of_mass"]
    near += view.wrench_colours()
    assert len(set(near)) == len(near), near
    return links


@pytest.mark.parametrize("harness", [{"marker_rate": 20.0},
                                     {"marker_rate": 20.0, "frame_prefix": "left/"}],
                         indirect=True)
def test_the_ur5e_as_the_node_draws_it(harness):
    """From the node's own message; with frame_prefix every marker's frame carries it (the
    view places a frame only through the prefix, as TF names it), and so does the wrench."""
    harness.stream("markers")
    message = harness.inbox["markers"][-1]
    prefix = harness.node.get_parameter("frame_prefix").value
    view = View((REPO / "urdf" / "rd_ur5e.urdf").read_text(), dict(zip(NAMES, Q)), message,
                frame_prefix=prefix)
    assert harness.stream("wrench").header.frame_id == prefix + "tool0"
    links = check(view, REF.tip_pose(Q)[1])
    assert {m.header.frame_id for m in message.markers} <= {prefix + link for link in links}
    table = [d for d in view.drawn if d.ns == "gravity_torques"]
    assert len(table) == 1 and len(table[0].text) == 7          # a title, six joints


@pytest.mark.parametrize("picture", ["rd_palletizer", "two_arms_left", "two_arms_right"])
def test_the_other_default_views(picture):
    """The palletizer (its loop closed, the rod drawn to where it meets the forearm) and the
    two arms of two_arms.launch.py, each in its namespace, with the markers the node's
    builder makes there."""
    urdf, q, namespace, xacro_args, prefix = VIEWS[picture]
    view, model = shipped_view(urdf, q, namespace, xacro_args, prefix)
    assert view.frame == prefix + "base_link"         # rviz2's fixed frame, as TF names it
    _, p = view.pose(prefix + model.tip_link)
    check(view, p)


def test_near_a_singularity_the_mass_ellipsoid_is_clipped_and_says_so():
    """rd_ur5e with the elbow 1 mrad from straight (the tip cannot move along the arm): the
    mass along it is in the tonnes; the ellipsoid stops at half the reach and a text says
    why. Away from it (the default view) no note."""
    q = dict(VIEWS["rd_ur5e"][1], elbow_joint=0.001)
    view, _ = shipped_view("rd_ur5e.urdf", q)
    (ellipsoid,) = [d for d in view.drawn if d.ns == "reflected_mass"]
    assert ellipsoid.extent == pytest.approx(view.scale.reach, rel=1e-9)     # 2 × reach/2
    (note,) = [d for d in view.drawn if d.ns == "reflected_mass_note"]
    assert note.text[0] == "tip mass clipped:" and "near singular" in note.text[1]
    assert float(note.text[1].split()[0]) > 100.0       # 2 × the arm: the ellipsoid's cap
    view, _ = shipped_view("rd_ur5e.urdf", VIEWS["rd_ur5e"][1])
    assert not [d for d in view.drawn if d.ns == "reflected_mass_note"]


def test_the_pictures_in_the_docs_are_the_default_views():
    """docs/node.md shows the pictures `make pictures` draws (support/rviz_view.py)."""
    text = (REPO / "docs" / "node.md").read_text()
    for picture in ("rviz_rd_ur5e.png", "rviz_rd_palletizer.png", "rviz_two_arms.png"):
        assert (REPO / "docs" / "images" / picture).stat().st_size > 10_000
        assert f"images/{picture}" in text
    assert "pictures:" in (REPO / "Makefile").read_text()


@pytest.mark.parametrize("harness", [{"frame_prefix": "left/"}], indirect=True)
def test_a_target_in_a_prefixed_frame_is_taken(harness):
    """With frame_prefix, a ~/target_pose in the frames TF names (left/base_link) is the
    node's base link: admitted, the Cartesian mode starts; a frame of another arm is
    refused, naming it."""
    from geometry_msgs.msg import PoseStamped
    harness.stream("gravity")
    publisher = harness.peer.create_publisher(PoseStamped, "/dynamics_node/target_pose", 10)
    R, p = REF.tip_pose(Q)
    for frame, mode in (("right/base_link", "gravity"),
                        ("left/base_link", "cartesian_impedance")):
        msg = PoseStamped()
        msg.header.frame_id = frame
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(x) for x in p)
        msg.pose.orientation = quaternion_from_matrix(R)
        events = len(harness.inbox["events"])
        publisher.publish(msg)              # its answer: an event, refused or a new target

        def answers():
            return [e for e in harness.inbox["events"][events:]
                    if e.kind in ("refused", "tracking")]
        assert harness.spin_until(answers, action=lambda: harness.publish_state(NAMES, Q, QD))
        answer = answers()[0]
        # the other arm's frame refused for its frame; this arm's taken (or, on a machine
        # too loaded for the stiffness at the period it measures, refused for that alone)
        assert (f"frame_id '{frame}'" in answer.message) == (frame == "right/base_link"), \
            answer.message
        assert answer.kind == "refused" or harness.node.controller.mode == mode, answer
