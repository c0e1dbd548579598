"""The nodes' parameters (tables in parameter_tables.py): their declaration, reading and
validation.

Both nodes take the chain the same way (CHAIN: description, links, gravity, backend, command
joints, start-up payload); the dynamics node adds its control and output parameters
(DYNAMICS_NODE), the simulator its integration parameters (SIM_ARM). An optional parameter (its
default depends on the model, e.g. hold_damping) is an empty array until given, so that
`ros2 param dump` shows it; empty means unset and reads as None. rclpy takes [] for a byte
array, so these are dynamically typed and their type is checked here. Validation is kept apart
from applying: `validate(values, dof)` returns the reason a set of values is unacceptable,
or None; it checks whichever of the names it knows are present.
"""

import array
import math

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException

from ..control.limits import SCALE_RANGE, check_scale
from ..control.settings import per_joint, thresholds
from ..errors import ArgumentError
from ..model.robot_model import gravity_vector
# the tables too, as parameters.DYNAMICS_NODE etc. for the nodes and tests
from ..control.safety_planes import planes_from
from .parameter_tables import (CHAIN, CHOICES, DOUBLES, DYNAMICS_NODE, OPTIONAL, PER_JOINT,
                               RANGES, RUNTIME, SCALES, SIM_ARM, STRINGS, Spec)

# the element type of each array kind, and its name in a reason
_ELEMENT = {STRINGS: (str, "strings"), DOUBLES: (float, "doubles")}


def descriptor(name, spec):
    """The ParameterDescriptor of parameter `name` (ranges for the tools that show them; an
    optional one is dynamically typed, its type checked by `validate`)."""
    optional = spec.default is None
    d = ParameterDescriptor(name=name, type=spec.kind, read_only=spec.read_only,
                            description=spec.description + (
                                " An empty array: unset." if optional else ""),
                            dynamic_typing=optional)
    if name in SCALES:
        d.floating_point_range = [FloatingPointRange(from_value=SCALE_RANGE[0],
                                                     to_value=SCALE_RANGE[1])]
    if name == "thread_priority":
        d.integer_range = [IntegerRange(from_value=0, to_value=99, step=1)]
    return d


def declare(node, table):
    """Declare every parameter of `table` on `node` (an optional one as an empty array)."""
    for name, spec in table.items():
        if spec.default is not None:
            node.declare_parameter(name, spec.default, descriptor(name, spec))
            continue
        # a params file's [] (`ros2 param dump` of an unset one) reaches rclpy as no value:
        # declared changeable to see what was given, then again as [] or that, read-only
        changeable = Spec(spec.default, spec.kind, spec.description, RUNTIME)
        given = node.declare_parameter(name, [], descriptor(name, changeable)).value
        node.undeclare_parameter(name)
        node.declare_parameter(name, [] if given is None else given, descriptor(name, spec),
                               ignore_override=True)


def read(node, table):
    """name → value of every parameter of `table`: arrays as lists; an optional one None
    when unset (empty)."""
    out = {}
    for name, spec in table.items():
        try:
            value = node.get_parameter(name).value
        except ParameterUninitializedException:
            value = None
        out[name] = list(value) if spec.kind in _ELEMENT and value is not None else value
    return unset_as_none(out)


def wrong_type(values):
    """Reason why an optional parameter among `values` (name → value) has the wrong type,
    else None (empty or None: unset, whatever its type)."""
    for name, value in values.items():
        if name not in OPTIONAL or value is None:
            continue
        element, called = _ELEMENT[OPTIONAL[name].kind]
        if isinstance(value, (str, bytes, bool, int, float)) or (len(value) and not all(
                isinstance(v, element) and not isinstance(v, bool) for v in value)):
            return f"{name} must be an array of {called}, got {value!r}"
    return None


def unset_as_none(values):
    """`values` (name → value) with each empty optional parameter as None."""
    return {name: None if name in OPTIONAL and _empty_array(value) else value
            for name, value in values.items()}


def _empty_array(value):
    return isinstance(value, (list, tuple, array.array)) and len(value) == 0


def validate(values, dof):
    """Reason why the parameter values (a dict, name → value; unset: None) are unacceptable,
    else None. dof: the chain's joint count, for the per-joint parameters."""
    reason = wrong_type(values)
    if reason:
        return reason
    values = unset_as_none(values)
    try:
        for name, positive in PER_JOINT.items():
            gains = per_joint(values.get(name), dof, name)
            if gains is not None and any(not math.isfinite(v) or v < 0 or (positive and v == 0)
                                         for v in gains):
                return f"{name} must be finite and {'> 0' if positive else '>= 0'}"
        gains = per_joint(values.get("observer_gain"), dof, "observer_gain")
        if gains is not None and 0.0 in gains and any(gains):
            return "observer_gain must be > 0 for every joint, or [0.0] (no observer)"
        contact = per_joint(values.get("contact_thresholds"), dof, "contact_thresholds")
        collision = per_joint(values.get("collision_thresholds"), dof, "collision_thresholds")
        if contact is not None and collision is not None and any(
                a > b for a, b in zip(contact, collision)):
            return "each collision threshold must be >= the contact threshold of its joint"
        for name in SCALES:
            if name in values:
                check_scale(values[name], name)
        if "gravity" in values:
            gravity_vector(values["gravity"])
        planes_from(values.get("safety_planes"))
    except (ValueError, ArgumentError) as exc:
        return str(exc)
    for name, ok in RANGES.items():
        if name in values and not ok(values[name]):
            return f"{name}={values[name]!r} is out of range"
    for name, choices in CHOICES.items():      # a list: each of its values
        given = values.get(name)
        if name in values and any(v not in choices for v in (
                given if isinstance(given, (list, tuple)) else [given])):
            return f"{name} must be one of {choices}, got {values[name]!r}"
    return None


THRESHOLDS = ("contact_thresholds", "collision_thresholds")


def validate_update(node, changed, model):
    """Reason why a parameter update (`changed`: name → value) of `node` (a DynamicsNode) is
    unacceptable, else None. The two thresholds are checked together (one may be unset: it
    then stands for its default of `model`); before the model is known (None) only the
    checks that need no joint count apply."""
    values = unset_as_none(changed)
    if any(name in values for name in THRESHOLDS):
        current = read(node, {name: DYNAMICS_NODE[name] for name in THRESHOLDS})
        values = {**current, **values}
        if model is not None:
            defaults = thresholds(None, None, model.effort_limit)
            for name, default in zip(THRESHOLDS, defaults):
                if values[name] is None:
                    values[name] = default.tolist()
    if model is None:
        return validate({k: v for k, v in values.items() if k not in PER_JOINT}, 1)
    return validate(values, model.dof)


def validate_start(values, dof):
    """Reason why dynamics_node cannot start with `values` for a chain of `dof` joints, else
    None: validate, and the rules between parameters."""
    reason = validate(values, dof)
    if reason:
        return f"invalid parameter: {reason}"
    if values["effort_source"] == "current" and values["torque_constants"] is None:
        return "effort_source current needs torque_constants [N m/A]"
    if values["payload_mass"] > values["max_payload_mass"]:
        return (f"payload_mass {values['payload_mass']} kg exceeds max_payload_mass "
                f"{values['max_payload_mass']} kg")
    return None
