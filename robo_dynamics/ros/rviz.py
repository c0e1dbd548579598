"""What rviz2 is given, rclpy-free: the arm's scale (its reach and mass, from the URDF) that
sizes the markers and arrows, and the rviz config for an arm in a namespace (every
display's topic under it, the fixed frame the arm's root link). Used by dynamics_node's
markers and by the launch file."""

import dataclasses
import re
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
import yaml

STANDARD_GRAVITY = 9.81


@dataclasses.dataclass(frozen=True)
class ArmScale:
    """reach [m]: the longest path of joint offsets from the root to a leaf; mass [kg]: the
    links' total. Every size in rviz follows from them (docs/node.md, "In rviz2"):

    - a force equal to the arm's weight draws half the reach: metres_per_newton;
    - a moment of that weight at the reach draws half the reach: metres_per_newton_metre;
    - a mass equal to the arm's draws a quarter of the reach: metres_per_kg;
    - labels are reach / 30 high."""

    reach: float
    mass: float

    @property
    def metres_per_newton(self):
        return 0.5 * self.reach / (self.mass * STANDARD_GRAVITY)

    @property
    def metres_per_newton_metre(self):
        return 0.5 / (self.mass * STANDARD_GRAVITY)

    @property
    def metres_per_kg(self):
        return 0.25 * self.reach / self.mass

    @property
    def label_height(self):
        return self.reach / 30.0


def arm_scale(urdf_xml):
    """ArmScale of a URDF's text (joint offsets and link masses; xacro already expanded)."""
    robot = ET.fromstring(urdf_xml)
    children, mass = {}, 0.0
    for joint in robot.findall("joint"):
        origin = joint.find("origin")
        xyz = [float(x) for x in origin.get("xyz", "0 0 0").split()] if origin is not None \
            else [0.0, 0.0, 0.0]
        children.setdefault(joint.find("parent").get("link"), []).append(
            (joint.find("child").get("link"), float(np.linalg.norm(xyz))))
    for m in robot.iter("mass"):
        mass += float(m.get("value"))

    def longest(link):
        return max((length + longest(child) for child, length in children.get(link, [])),
                   default=0.0)
    return ArmScale(reach=max(longest(root_link(urdf_xml)), 0.1), mass=max(mass, 0.1))


def root_link(urdf_xml):
    """The URDF's root link: the one no joint has as its child."""
    robot = ET.fromstring(urdf_xml)
    child = {j.find("child").get("link") for j in robot.findall("joint")}
    (root,) = [link.get("name") for link in robot.findall("link")
               if link.get("name") not in child]
    return root


def rviz_config(template, namespace, fixed_frame, scale):
    """The rviz config `template` (YAML text, written for the root namespace) for an arm in
    `namespace`: every absolute topic moved under it (robot_description, the node's
    outputs; not /tf), the fixed frame `fixed_frame`, the wrench and effort displays'
    arrows scaled by `scale` (ArmScale)."""
    config = yaml.safe_load(template)
    prefix = "/" + namespace.strip("/") if namespace.strip("/") else ""
    manager = config["Visualization Manager"]
    manager["Global Options"]["Fixed Frame"] = fixed_frame

    def move(entry):
        if isinstance(entry, dict):
            for key, value in entry.items():
                if isinstance(value, dict) and isinstance(value.get("Value"), str) and \
                        re.match(r"/(robot_description|dynamics_node/)", value["Value"]):
                    value["Value"] = prefix + value["Value"]
                else:
                    move(value)
        elif isinstance(entry, list):
            for item in entry:
                move(item)
    move(manager["Displays"])
    for display in manager["Displays"]:
        if display.get("Class") == "rviz_default_plugins/Wrench":
            display["Force Arrow Scale"] = round(scale.metres_per_newton, 6)
            display["Torque Arrow Scale"] = round(scale.metres_per_newton_metre, 6)
        elif display.get("Class") == "rviz_default_plugins/Effort":
            display["Scale"] = round(scale.metres_per_newton_metre, 6)
    return yaml.safe_dump(config, sort_keys=False)


def expanded(urdf_path, xacro_args=""):
    """The URDF text of a .urdf file, or of a .xacro file expanded with `xacro_args`
    ("name:=value ..."), as the launch file's robot_description is."""
    if not urdf_path.endswith(".xacro"):
        with open(urdf_path, encoding="utf-8") as stream:
            return stream.read()
    import xacro
    mappings = dict(arg.split(":=", 1) for arg in xacro_args.split() if ":=" in arg)
    return xacro.process_file(urdf_path, mappings=mappings).toxml()


def config_file(template_path, urdf_xml, namespace):
    """A temporary rviz config (its path) for the arm `urdf_xml` in `namespace`: the
    template's topics under the namespace, the fixed frame its root link, arrows to its
    scale (rviz_config)."""
    with open(template_path, encoding="utf-8") as stream:
        text = rviz_config(stream.read(), namespace, root_link(urdf_xml), arm_scale(urdf_xml))
    name = namespace.strip("/").replace("/", "_") or "root"
    with tempfile.NamedTemporaryFile("w", suffix=f"_{name}.rviz", prefix="robo_dynamics_",
                                     delete=False, encoding="utf-8") as stream:
        stream.write(text)
    return stream.name
