"""The rviz2 config for an arm in a namespace, from the shipped template (config/dynamics.rviz):
every display's topic under the namespace, the fixed frame the arm's root link, arrows to
the arm's scale. The launch file writes it to a temporary file for rviz2."""

import re
import tempfile

import yaml

from .scale import arm_scale, root_link


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


def config_file(template_path, urdf_xml, namespace, frame_prefix=""):
    """A temporary rviz config (its path) for the arm `urdf_xml` in `namespace`: the
    template's topics under the namespace, the fixed frame its root link (after
    frame_prefix, as robot_state_publisher names it), arrows to its scale (rviz_config)."""
    with open(template_path, encoding="utf-8") as stream:
        text = rviz_config(stream.read(), namespace, frame_prefix + root_link(urdf_xml),
                           arm_scale(urdf_xml))
    name = namespace.strip("/").replace("/", "_") or "root"
    with tempfile.NamedTemporaryFile("w", suffix=f"_{name}.rviz", prefix="robo_dynamics_",
                                     delete=False, encoding="utf-8") as stream:
        stream.write(text)
    return stream.name
