"""The chain a node works on, from its parameter values (parameters.CHAIN): the robot
description loaded between base_link and tip_link under the given gravity, the start-up
payload, and the order of the joints in the effort commands. Shared by both nodes."""

import warnings
import xml.etree.ElementTree as ET

import numpy as np

from ..control.settings import friction_beyond_reach, per_joint, working_pose
from ..errors import ArgumentError, ModelWarning
from ..model.loader import load_robot
from ..model.source import read_description
from ..spatial.inertia import inertia_tensor


def load_chain(description, values):
    """The RobotModel of `description` (URDF text or a .urdf/.xacro path) for the parameter
    values; with actuated_joints or loop_closures given, a closed linkage's MotorModel
    (load_linkage). Doubtful inertias do not warn here: the caller reports `model.warnings`
    its own way. Raises URDFError / ArgumentError with the reason."""
    if values.get("actuated_joints") or values.get("loop_closures"):
        return with_limits(load_linkage(description, values), values)
    if values.get("joint_springs"):
        raise ArgumentError("joint_springs: springs act on a closed linkage's joints only "
                            "(give actuated_joints); a serial chain's are not modelled yet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        return with_limits(load_robot(description, base_link=values["base_link"] or None,
                                      tip_link=values["tip_link"] or None,
                                      gravity=values["gravity"],
                                      strict=bool(values.get("strict_model"))), values)


def with_limits(model, values):
    """`model` with the limits effort_limits and velocity_limits give; ArgumentError naming
    the joints whose limit is then 0 (every command clamped to nothing)."""
    model = model.with_limits(*(per_joint(values.get(name), model.dof, name)
                                for name in ("effort_limits", "velocity_limits")))
    for field, name, what in (("effort_limit", "effort_limits", "an effort limit"),
                              ("velocity_limit", "velocity_limits", "a velocity limit")):
        zero = model.zero_limits(field)
        if zero:
            raise ArgumentError(f"the URDF gives {', '.join(zero)} {what} "
                                f"of 0: give the arm's limits with the parameter {name} (one "
                                f"per joint, {list(model.joint_names)})")
    return model


def load_linkage(description, values):
    """The MotorModel (closed_chain/motor_model.py) of the closed linkage `description` describes
    with the parameter values' actuated_joints, loop_closures (and the URDF's <gazebo>
    closures) and joint_springs, its tool at tip_link. ArgumentError / URDFError with the reason."""
    from ..closed_chain import load_closed_chain
    from ..closed_chain.motor_model import motor_model
    xml_text, _ = read_description(description)
    section = {"actuated_joints": values.get("actuated_joints") or []}
    for name in ("loop_closures", "joint_springs"):
        if values.get(name):
            section[name] = values[name]
    chain = load_closed_chain(xml_text, section, gravity=values["gravity"])
    if values["base_link"] and values["base_link"] != chain.tree.base_link:
        raise ArgumentError(f"base_link '{values['base_link']}': a closed linkage is taken "
                            f"whole, from its root '{chain.tree.base_link}'")
    if not values["tip_link"]:
        raise ArgumentError("tip_link must name a closed linkage's tool link")
    return motor_model(chain, values["tip_link"], xml_text)


def start_up_payload(values):
    """(link, mass [kg], com (3,) [m], inertia (3, 3) [kg·m²] about the CoM) of the payload
    parameters, or None when payload_link is empty."""
    if not values["payload_link"]:
        return None
    return (values["payload_link"], values["payload_mass"], list(values["payload_com"]),
            inertia_tensor(*values["payload_inertia"]))


def command_index(model, names):
    """Model index of each joint of the effort commands (command_joints; None: the chain's
    order), as an int array; ValueError unless they are distinct chain joints."""
    names = list(model.joint_names) if names is None else list(names)
    missing = [name for name in names if name not in model.joint_names]
    if missing or len(set(names)) != len(names):
        raise ValueError(f"command_joints must be distinct chain joints; not in the chain: "
                         f"{missing} (chain: {list(model.joint_names)})")
    return np.array([model.joint_index(name) for name in names], dtype=int)


def joint_names_of(urdf_xml):
    """Every joint name of a URDF (the chain's and the others': joint states may carry any)."""
    return [joint.get("name") for joint in ET.fromstring(urdf_xml).iter("joint")]


def describe(model, backend, command_names, solver, settings):
    """What a node says of its chain at start-up: (is a warning, line) pairs; `solver` and
    `settings` (the controller's) judge the friction the tracking must overcome."""
    solved_by = (f"backend '{backend}'" if getattr(model, "mechanism", None) is None
                 else "the in-house closed-chain solver (a linkage: no backend applies)")
    lines = [(False, f"{model.name}: chain {model.base_link} -> {model.tip_link}, {model.dof} "
                     f"joints {list(model.joint_names)}; {solved_by}, commands for "
                     f"{list(command_names)}")]
    if model.mimic_joints:
        lines.append((False, f"mimic joints {list(model.mimic_joints)} follow their master "
                             "joints; their joint states are ignored"))
    return (lines + [(True, f"robot description: {note}") for note in model.warnings]
            + [(True, line) for line in friction_beyond_reach(
                solver.model, solver.mass_matrix(working_pose(solver.model)), settings)])


def log_lines(logger, lines):
    """Log describe's (is a warning, line) pairs on `logger`."""
    for warning, line in lines:
        if warning:          # two call sites: rclpy keeps one severity per call site
            logger.warning(line)
        else:
            logger.info(line)
