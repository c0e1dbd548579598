"""A closed linkage's parameters on a node: loop_closures.<name>.<field> for each name of
loop_closures.names (parameter_tables.CLOSED_LINKAGE), declared once the names are known,
read back as the nested section closed_chain.closures_from_parameters takes; the
linkage's section of a params file, for the launch file to give sim_arm; and a section's
parameter names, for a command line."""

import yaml
from rcl_interfaces.msg import ParameterDescriptor

from ..parameter_tables import CLOSURE_FIELDS, DOUBLES, SPRING_FIELDS, STRING


def declare_closures(node):
    """Declare loop_closures.<name>.<field> (read-only) for every name node's
    loop_closures.names lists (a params file's values taken, the fields' defaults else)."""
    for name in node.get_parameter("loop_closures.names").value or []:
        for field, default in CLOSURE_FIELDS.items():
            full = f"loop_closures.{name}.{field}"
            if not node.has_parameter(full):
                node.declare_parameter(full, default, ParameterDescriptor(
                    name=full, type=STRING if isinstance(default, str) else DOUBLES,
                    read_only=True, description=f"Loop closure {name}: {field} "
                    "(docs/closed-chains.md)."))


def linkage_values(node, values):
    """`values` (the node's parameters, parameters.read) with loop_closures as the nested
    section {names: [...], name: {field: value}} (None when no closure is named) and
    joint_springs as {joints, stiffness, reference, damping} (None when no joint is)."""
    names = values.pop("loop_closures.names", None) or []
    values["loop_closures"] = None if not names else {"names": list(names), **{
        name: {field: _plain(node.get_parameter(f"loop_closures.{name}.{field}").value)
               for field in CLOSURE_FIELDS} for name in names}}
    springs = {field: values.pop(f"joint_springs.{field}", None) for field in SPRING_FIELDS}
    values["joint_springs"] = springs if springs["joints"] else None
    return values


def _plain(value):
    return value if isinstance(value, str) else list(value)


def linkage_section(params_file):
    """{actuated_joints, loop_closures, joint_springs, tip_link, effort_limits,
    velocity_limits} of the dynamics_node section of `params_file` (a ROS 2 params file),
    those given: what sim_arm needs to simulate the same linkage (its drives' limits where
    the URDF leaves them 0); {} for a serial arm's file."""
    with open(params_file, encoding="utf-8") as stream:
        content = yaml.safe_load(stream) or {}
    for key, section in content.items():
        if str(key).rsplit("/", 1)[-1] == "dynamics_node" and isinstance(section, dict):
            values = section.get("ros__parameters") or {}
            if "actuated_joints" not in values and "loop_closures" not in values:
                return {}
            return {name: values[name] for name in ("actuated_joints", "loop_closures",
                                                    "joint_springs", "tip_link",
                                                    "effort_limits", "velocity_limits")
                    if name in values}
    return {}


def parameter_names(section, prefix=""):
    """A params file's nested mappings as ROS 2 parameter names (a.b.c) and their values."""
    out = {}
    for key, value in section.items():
        if isinstance(value, dict):
            out.update(parameter_names(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
