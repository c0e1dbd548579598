"""Simple visuals for the shipped URDFs, so that rviz2's RobotModel shows the arm.

    python scripts/urdf_visuals.py          # rewrites the shipped files' visuals in place

Each link gets, between the markers `<!-- visuals: scripts/urdf_visuals.py -->` and
`<!-- end visuals -->` (replaced on every run, nothing else in the file touched):

- a cylinder from the link's origin to each child joint's origin, and to each loop
  closure point the arm's params file puts on the link (`loop_closures`: a linkage's rod
  ends); a link with neither, but a centre of mass off its origin, a cylinder from the
  origin through it and as far again (a uniform rod);
- a short, wider cylinder along each joint's axis at the link's origin (the drive);
- the root link a flat disc (the arm's foot); massless links (tool frames, a Delta's
  guide) nothing.

The radius is the link's own, from its inertia: a solid cylinder of mass m has its
smallest principal moment ½ m r² about its axis, so r = √(2 I_min / m), within 1.5–8 cm
(point masses and massless links: 2 cm). Visuals do not enter the dynamics.
"""

import math
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

import numpy as np
import yaml

REPO = pathlib.Path(__file__).resolve().parent.parent
START, END = "<!-- visuals: scripts/urdf_visuals.py -->", "<!-- end visuals -->"
SHIPPED = {"rd_ur5e.urdf": None, "planar_2link.urdf": None,
           "rd_palletizer.urdf": "rd_palletizer.yaml", "rd_delta.urdf": "rd_delta.yaml"}
COLOURS = {"link": "0.62 0.64 0.68 1", "drive": "0.25 0.45 0.75 1"}


def numbers(text, default):
    return [float(x) for x in text.split()] if text else list(default)


def link_radius(link):
    """[m] the radius of a solid cylinder with this link's mass and smallest moment."""
    inertial = link.find("inertial")
    if inertial is None or inertial.find("mass") is None:
        return 0.02
    m = float(inertial.find("mass").get("value"))
    i = inertial.find("inertia")
    I = np.array([[float(i.get("ixx")), float(i.get("ixy")), float(i.get("ixz"))],
                  [float(i.get("ixy")), float(i.get("iyy")), float(i.get("iyz"))],
                  [float(i.get("ixz")), float(i.get("iyz")), float(i.get("izz"))]])
    smallest = float(np.linalg.eigvalsh(I)[0])
    if m <= 0.0 or smallest <= 0.0:
        return 0.02
    return float(np.clip(math.sqrt(2.0 * smallest / m), 0.015, 0.08))


def rpy_along(d):
    """URDF rpy (R = Rz(yaw) Ry(pitch) Rx(roll)) of a frame whose z axis is along d."""
    z = np.asarray(d, dtype=float) / np.linalg.norm(d)
    x = np.cross([0.0, 1.0, 0.0], z) if abs(z[1]) < 0.9 else np.cross(z, [1.0, 0.0, 0.0])
    x /= np.linalg.norm(x)
    R = np.column_stack((x, np.cross(z, x), z))
    pitch = math.asin(-max(-1.0, min(1.0, R[2, 0])))
    return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])


def cylinder(centre, rpy, radius, length, colour):
    centre, rpy = [c + 0.0 for c in centre], [a + 0.0 for a in rpy]     # no "-0"
    return (f'<visual><origin xyz="{centre[0]:.6g} {centre[1]:.6g} {centre[2]:.6g}" '
            f'rpy="{rpy[0]:.6g} {rpy[1]:.6g} {rpy[2]:.6g}"/><geometry><cylinder '
            f'radius="{radius:.4g}" length="{length:.6g}"/></geometry><material '
            f'name="rd_{colour}"><color rgba="{COLOURS[colour]}"/></material></visual>')


def visuals(urdf_text, closure_points=None):
    """link name → the <visual> elements (text) for that link (module docstring)."""
    robot = ET.fromstring(urdf_text)
    links = {link.get("name"): link for link in robot.findall("link")}
    joints = robot.findall("joint")
    children = {name: [] for name in links}
    parents = {j.find("child").get("link"): j for j in joints}
    for j in joints:
        origin = j.find("origin")
        xyz = numbers(origin.get("xyz") if origin is not None else "", (0, 0, 0))
        children[j.find("parent").get("link")].append(np.array(xyz))
    for link, points in (closure_points or {}).items():
        children[link].extend(np.array(p, dtype=float) for p in points)
    out = {}
    for name, link in links.items():
        r, parts = link_radius(link), []
        mass = link.find("inertial/mass")
        if name in parents and (mass is None or float(mass.get("value")) <= 0.0):
            continue                      # a frame (tool0) or a massless guide: nothing

        ends = [p for p in children[name] if np.linalg.norm(p) > 1e-9]
        inertial = link.find("inertial")
        if not ends and inertial is not None and inertial.find("origin") is not None:
            com = np.array(numbers(inertial.find("origin").get("xyz"), (0, 0, 0)))
            if np.linalg.norm(com) > 1e-9 and name in parents:
                ends = [2.0 * com]
        for end in ends:
            parts.append(cylinder(0.5 * end, rpy_along(end), r, float(np.linalg.norm(end)),
                                  "link"))
        joint = parents.get(name)
        if joint is not None and joint.get("type") in ("revolute", "continuous",
                                                         "prismatic"):
            axis = numbers(joint.find("axis").get("xyz") if joint.find("axis") is not None
                           else "", (1, 0, 0))
            parts.append(cylinder((0, 0, 0), rpy_along(axis), 1.3 * r, 2.6 * r, "drive"))
        if name not in parents:                                    # the root: a foot
            parts.append(cylinder((0, 0, 0), (0, 0, 0), 0.1, 0.02, "drive"))
        if parts:
            out[name] = parts
    return out


def with_visuals(urdf_text, closure_points=None):
    """urdf_text with each link's generated visuals in place (the old ones replaced)."""
    text = re.sub(rf"\n *{re.escape(START)}.*?{re.escape(END)}", "", urdf_text, flags=re.S)
    for name, parts in visuals(text, closure_points).items():
        block = "\n    ".join([START, *parts, END])
        empty = re.compile(rf'( *)<link name="{re.escape(name)}"\s*/>')
        if empty.search(text):
            text = empty.sub(lambda m: f'{m[1]}<link name="{name}">\n{m[1]}  {block}\n'
                                       f'{m[1]}</link>', text, count=1)
            continue
        opening = re.compile(rf'( *)<link name="{re.escape(name)}">')
        text = opening.sub(lambda m: f"{m[0]}\n{m[1]}  {block}", text, count=1)
    return text


def closure_points(config):
    """link → the loop closure points a params file puts on it (xyz_a, xyz_b)."""
    if config is None:
        return {}
    section = yaml.safe_load((REPO / "config" / config).read_text())[
        "/**/dynamics_node"]["ros__parameters"]
    loops = section.get("loop_closures", {})
    points = {}
    for name in loops.get("names", []):
        c = loops[name]
        points.setdefault(c["link_a"], []).append(c.get("xyz_a", [0, 0, 0]))
        points.setdefault(c["link_b"], []).append(c.get("xyz_b", [0, 0, 0]))
    return points


def main():
    for urdf, config in SHIPPED.items():
        path = REPO / "urdf" / urdf
        path.write_text(with_visuals(path.read_text(), closure_points(config)))
        print(f"visuals written into urdf/{urdf}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
