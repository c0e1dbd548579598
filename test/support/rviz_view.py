"""What rviz2's default view shows of an arm and the node's markers, headless: the URDF's
visuals and the markers (a MarkerArray, as the node publishes it) placed by the arm's
kinematics at q and projected orthographically along the view of the rviz config the
launch file generates (rviz/config.py). test_rviz_view.py measures sizes, overlaps, frames and
colours on it; `make pictures` (python test/support/rviz_view.py) draws the default views
into docs/images/.

Text is taken as rviz draws it: lines `scale.z` high, each character about 0.6 of that wide.
"""

import dataclasses
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

import numpy as np
import yaml

from robo_dynamics.closed_chain.tree import load_tree
from robo_dynamics.closed_chain.tree_dynamics import frame_pose, tree_kinematics
from robo_dynamics.ros.conversions import matrix_from_quaternion
from robo_dynamics.rviz.config import config_file, expanded
from robo_dynamics.rviz.scale import arm_scale
from robo_dynamics.spatial.rotations import rpy_to_matrix

REPO = pathlib.Path(__file__).resolve().parents[2]
CHAR_WIDTH = 0.6         # × the text's height
LINE_SPACING = 1.2


@dataclasses.dataclass
class Drawn:
    """One marker as the view shows it: its namespace, colour (r, g, b), where it is
    (base frame [m]), its largest extent [m], and its box on the view's plane (x0, y0, x1,
    y1) [m]; text: its lines."""
    ns: str
    colour: tuple
    position: np.ndarray
    extent: float
    box: tuple
    text: list


class View:
    """The arm `urdf_xml` at q ({joint name: value}) and `markers` (visualization_msgs
    MarkerArray) in the default view of the rviz config for `namespace`."""

    def __init__(self, urdf_xml, q, markers, namespace="", frame_prefix=""):
        self.urdf_xml, self.scale, self.prefix = urdf_xml, arm_scale(urdf_xml), frame_prefix
        self.tree = load_tree(urdf_xml)
        values = np.array([q.get(name, 0.0) for name in self.tree.joint_names])
        self.kin = tree_kinematics(self.tree, values)
        path = config_file(str(REPO / "config" / "dynamics.rviz"), urdf_xml, namespace,
                           frame_prefix)
        self.config = yaml.safe_load(pathlib.Path(path).read_text())
        pathlib.Path(path).unlink()
        view = self.config["Visualization Manager"]["Views"]["Current"]
        pitch, yaw = float(view["Pitch"]), float(view["Yaw"])
        eye = np.array([np.cos(pitch) * np.cos(yaw), np.cos(pitch) * np.sin(yaw), np.sin(pitch)])
        self.right = np.cross(-eye, [0.0, 0.0, 1.0])
        self.right /= np.linalg.norm(self.right)
        self.up = np.cross(self.right, -eye)
        self.frame = self.config["Visualization Manager"]["Global Options"]["Fixed Frame"]
        self.drawn = [self._marker(m) for m in markers.markers]

    def pose(self, link):
        """(R, p) of `link` (a TF frame: the URDF link after frame_prefix) in the base frame;
        KeyError for a frame the arm does not have."""
        if not link.startswith(self.prefix):
            raise KeyError(f"frame '{link}' lacks the prefix '{self.prefix}'")
        link = link[len(self.prefix):]
        if link == self.tree.base_link:
            return np.eye(3), np.zeros(3)
        _, R, p = frame_pose(self.tree, self.kin, link)
        return R, p

    def project(self, p):
        return np.array([p @ self.right, p @ self.up])

    def segments(self):
        """(start, end, radius) in the base frame of every cylinder the URDF's visuals draw."""
        out = []
        for link in ET.fromstring(self.urdf_xml).findall("link"):
            R_link, p_link = self.pose(self.prefix + link.get("name"))
            for visual in link.findall("visual"):
                cylinder = visual.find("geometry/cylinder")
                if cylinder is None:
                    continue
                origin = visual.find("origin")
                xyz = [float(v) for v in origin.get("xyz", "0 0 0").split()]
                rpy = [float(v) for v in origin.get("rpy", "0 0 0").split()]
                R = R_link @ rpy_to_matrix(rpy)
                c = p_link + R_link @ np.array(xyz)
                half = 0.5 * float(cylinder.get("length")) * R[:, 2]
                out.append((c - half, c + half, float(cylinder.get("radius"))))
        return out

    def _marker(self, m):
        R, p = self.pose(m.header.frame_id)
        centre = p + R @ np.array([m.pose.position.x, m.pose.position.y, m.pose.position.z])
        colour = (round(m.color.r, 3), round(m.color.g, 3), round(m.color.b, 3))
        if m.type == m.TEXT_VIEW_FACING:
            lines = m.text.split("\n")
            h = m.scale.z
            w, tall = CHAR_WIDTH * h * max(len(line) for line in lines), LINE_SPACING * h * len(lines)
            c = self.project(centre)
            return Drawn(m.ns, colour, centre, max(w, tall),
                         (c[0] - w / 2, c[1] - tall / 2, c[0] + w / 2, c[1] + tall / 2), lines)
        if m.type == m.ARROW:
            start, end = (p + R @ np.array([a.x, a.y, a.z]) for a in m.points)
            corners = np.array([self.project(start), self.project(end)])
            return Drawn(m.ns, colour, start, float(np.linalg.norm(end - start)),
                         (*corners.min(axis=0), *corners.max(axis=0)), [])
        axes = R @ matrix_from_quaternion(m.pose.orientation)      # spheres, ellipsoids
        semi = 0.5 * np.array([m.scale.x, m.scale.y, m.scale.z])
        reach = np.abs(np.array([axes[:, k] @ self.right for k in range(3)])) @ semi, \
            np.abs(np.array([axes[:, k] @ self.up for k in range(3)])) @ semi
        c = self.project(centre)
        return Drawn(m.ns, colour, centre, float(2 * semi.max()),
                     (c[0] - reach[0], c[1] - reach[1], c[0] + reach[0], c[1] + reach[1]), [])

    def wrench_colours(self):
        """(r, g, b) of the Wrench display's force and torque arrows (the tip's gravity
        wrench), as the config gives them."""
        (display,) = [d for d in self.config["Visualization Manager"]["Displays"]
                      if d["Class"] == "rviz_default_plugins/Wrench"]
        return [tuple(round(int(v) / 255.0, 3) for v in display[key].split(";"))
                for key in ("Force Color", "Torque Color")]

    def draw(self, axes, title):
        """The view on matplotlib `axes`."""
        from matplotlib.patches import Circle, Ellipse, Polygon, Rectangle
        for start, end, radius in self.segments():          # to scale: width 2 r
            a, b = self.project(start), self.project(end)
            d = b - a
            if np.linalg.norm(d) > 1e-9:
                n = radius * np.array([-d[1], d[0]]) / np.linalg.norm(d)
                axes.add_patch(Polygon([a + n, b + n, b - n, a - n], color="0.6", zorder=1))
            for c in (a, b):
                axes.add_patch(Circle(c, radius, color="0.6", zorder=1))
        for d in self.drawn:
            x0, y0, x1, y1 = d.box
            if d.text:
                axes.text(0.5 * (x0 + x1), 0.5 * (y0 + y1), "\n".join(d.text), color="k",
                          ha="center", va="center", fontsize=7, family="monospace", zorder=4)
                axes.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=0.3,
                                         ec="0.7", zorder=3))
            elif d.ns.startswith(("cartesian_target", "cartesian_wrench")):
                axes.plot([x0, x1], [y0, y1], color=d.colour, lw=2, zorder=3)
            else:
                axes.add_patch(Ellipse((0.5 * (x0 + x1), 0.5 * (y0 + y1)), x1 - x0, y1 - y0,
                                       color=d.colour, alpha=0.5, zorder=2))
        corners = [self.project(p) for start, end, _ in self.segments() for p in (start, end)]
        corners += [c for d in self.drawn for c in (d.box[:2], d.box[2:])]
        low, high = np.min(corners, axis=0), np.max(corners, axis=0)
        margin = 0.1 * self.scale.reach
        axes.set_xlim(low[0] - margin, high[0] + margin)
        axes.set_ylim(low[1] - margin, high[1] + margin)
        axes.set_aspect("equal")
        axes.set_title(title, fontsize=9)
        axes.axis("off")


def shipped_view(name, q, namespace="", xacro_args="", frame_prefix=""):
    """(View, model) of a shipped arm at q with the markers the node draws there (the
    same builder: ros/dynamics_node/markers.marker_array)."""
    import robo_dynamics as rd
    from std_msgs.msg import Header
    from robo_dynamics.ros.chain import load_chain
    from robo_dynamics.ros.dynamics_node import markers
    from robo_dynamics.ros.parameter_tables import DYNAMICS_NODE
    path = REPO / "urdf" / name
    text = expanded(str(path), xacro_args)
    values = {k: spec.default for k, spec in DYNAMICS_NODE.items()}
    config = REPO / "config" / re.sub(r"\.urdf(\.xacro)?$", ".yaml", name)
    if config.is_file():
        section = yaml.safe_load(config.read_text())["/**/dynamics_node"]["ros__parameters"]
        values.update({k: v for k, v in section.items() if k in values or k == "loop_closures"})
    model = load_chain(text, values)
    solver = rd.make_solver(model)
    v = np.array([q[j] for j in model.joint_names])
    if getattr(model, "mechanism", None) is not None:
        closed = model.mechanism.close(model.mechanism.reference)
        closed[[model.mechanism.tree.joint_index(j) for j in model.joint_names]] = v
        full = model.mechanism.close(closed)
        q = dict(zip(model.mechanism.tree.joint_names, full))
    _, p_tip = solver.tip_pose(v)
    scale = arm_scale(text)
    array = markers.marker_array(Header(frame_id=frame_prefix + model.base_link), model, p_tip,
                                 solver.jacobian(v)[:3], solver.mass_matrix_inverse(v),
                                 solver.gravity(v), scale, prefix=frame_prefix)
    return View(text, q, array, namespace, frame_prefix), model


VIEWS = {   # picture → (urdf, q by joint, namespace, xacro_args, frame_prefix): the docs' views
    "rd_ur5e": ("rd_ur5e.urdf", dict(zip(
        ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
         "wrist_2_joint", "wrist_3_joint"], [0.3, -1.1, 1.4, -0.9, 1.2, 0.4])), "", "", ""),
    "rd_palletizer": ("rd_palletizer.urdf", {"base_joint": -0.77, "shoulder_joint": 0.3,
                                             "rear_joint": -0.3, "wrist_joint": 0.4}, "", "",
                      ""),
    "two_arms_left": ("rd_ur5e.urdf", dict(zip(
        ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
         "wrist_2_joint", "wrist_3_joint"], [0.0, -1.57, 1.57, -1.57, -1.57, 0.0])), "left", "",
        "left/"),
    "two_arms_right": ("planar_2link.urdf.xacro", {"joint1": 0.5, "joint2": 0.8}, "right",
                       "l1:=0.8 l2:=0.4", "right/"),     # as two_arms.launch.py starts them
}


def main():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    folder = REPO / "docs" / "images"
    folder.mkdir(exist_ok=True)
    pictures = {"rviz_rd_ur5e.png": ["rd_ur5e"], "rviz_rd_palletizer.png": ["rd_palletizer"],
                "rviz_two_arms.png": ["two_arms_left", "two_arms_right"]}
    for picture, names in pictures.items():
        fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 5), squeeze=False)
        for ax, name in zip(axes[0], names):
            urdf, q, namespace, xacro_args, prefix = VIEWS[name]
            view, _ = shipped_view(urdf, q, namespace, xacro_args, prefix)
            view.draw(ax, f"{urdf} in '/{namespace}'" if namespace else urdf)
        fig.tight_layout()
        fig.savefig(folder / picture, dpi=110)
        plt.close(fig)
        print(f"docs/images/{picture}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
