"""The dynamics node's parameters: declaration (type, description, default) and validation.

Validation is kept apart from applying: `validate(values, dof)` returns the reason a set of
values is unacceptable, or None.
"""

import math

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                ParameterType)

READ_ONLY = True     # fixed at start-up
RUNTIME = False      # may be changed while running (validated first)

# name → (default, ParameterType, description, read_only); default None: declared by type
# only, and unset unless given.
PARAMETERS = {
    "robot_description": ("", ParameterType.PARAMETER_STRING,
                          "URDF XML text. Empty: use robot_description_file, else the "
                          "transient-local robot_description topic.", READ_ONLY),
    "robot_description_file": ("", ParameterType.PARAMETER_STRING,
                               "Path of a .urdf or .xacro file (used when "
                               "robot_description is empty).", READ_ONLY),
    "base_link": ("", ParameterType.PARAMETER_STRING,
                  "First link of the chain (fixed to the world). Empty: the URDF root.",
                  READ_ONLY),
    "tip_link": ("", ParameterType.PARAMETER_STRING,
                 "Last link of the chain; J and Λ refer to its origin. Empty: the only leaf.",
                 READ_ONLY),
    "strict_model": (False, ParameterType.PARAMETER_BOOL,
                     "Refuse a robot description whose chain has a doubtful inertia (triangle "
                     "inequality broken, massless link with inertia) instead of loading it "
                     "with a warning (logged once and listed on /diagnostics).", READ_ONLY),
    "gravity": ([0.0, 0.0, -9.81], ParameterType.PARAMETER_DOUBLE_ARRAY,
                "Gravity vector in the base_link frame [m/s^2] (wall, ceiling or tilted "
                "mounts).", READ_ONLY),
    "backend": ("pinocchio", ParameterType.PARAMETER_STRING,
                "Solver for every published quantity: 'pinocchio' or 'rnea' (in-house). The "
                "other one cross-checks it.", READ_ONLY),
    "command_joints": (None, ParameterType.PARAMETER_STRING_ARRAY,
                       "Joint order of the Float64MultiArray commands: the `joints` list of "
                       "the effort controller they feed (a subset of the chain, any order). "
                       "Unset: the chain's order.", READ_ONLY),
    "kp": ([100.0], ParameterType.PARAMETER_DOUBLE_ARRAY,
           "Computed-torque position gains [1/s^2], one per chain joint (model order) or one "
           "for all.", RUNTIME),
    "kd": ([20.0], ParameterType.PARAMETER_DOUBLE_ARRAY,
           "Computed-torque velocity gains [1/s], one per chain joint or one for all.", RUNTIME),
    "torque_limit_scale": (1.0, ParameterType.PARAMETER_DOUBLE,
                           "Commands are clamped to this fraction of the URDF effort limits, "
                           "in (0, 1].", RUNTIME),
    "max_torque_rate": ([1000.0], ParameterType.PARAMETER_DOUBLE_ARRAY,
                        "Largest rate of change of every published command [N m/s], one per "
                        "chain joint or one for all (libfranka's limit: 1000). Any change of "
                        "command (mode, trajectory, payload, gains, resuming) is a ramp.",
                        RUNTIME),
    "start_tolerance": ([0.01], ParameterType.PARAMETER_DOUBLE_ARRAY,
                        "A desired trajectory or set-point whose desired position now is "
                        "farther than this [rad or m] from the measured position is refused; "
                        "one per chain joint or one for all.", RUNTIME),
    "max_tracking_error": ([0.25], ParameterType.PARAMETER_DOUBLE_ARRAY,
                           "While tracking, an error |q_d - q| beyond this [rad or m] "
                           "abandons the desired motion for the safe hold; one per chain "
                           "joint or one for all.", RUNTIME),
    "velocity_limit_scale": (1.0, ParameterType.PARAMETER_DOUBLE,
                             "|qd| beyond this fraction of the URDF velocity limit switches "
                             "to the safe hold, in (0, 1].", RUNTIME),
    "hold_damping": (None, ParameterType.PARAMETER_DOUBLE_ARRAY,
                     "Joint damping of the safe hold (gravity compensation - D qd) "
                     "[N m s/rad], one per chain joint or one for all. Unset: 20/s times "
                     "the mass matrix diagonal at the zero configuration.", RUNTIME),
    "stale_timeout": (0.1, ParameterType.PARAMETER_DOUBLE,
                      "Joint states older than this [s] stop the command stream.", RUNTIME),
    "cross_check_rate": (1.0, ParameterType.PARAMETER_DOUBLE,
                         "How often [Hz] the other backend recomputes the latest state; 0 "
                         "disables the cross-check.", RUNTIME),
    "cross_check_tolerance": (1e-6, ParameterType.PARAMETER_DOUBLE,
                              "Largest relative difference between backends before "
                              "diagnostics report ERROR.", RUNTIME),
    "friction_compensation": (False, ParameterType.PARAMETER_BOOL,
                              "Add viscous + Coulomb friction torques to the commands.", RUNTIME),
    "viscous_friction": (None, ParameterType.PARAMETER_DOUBLE_ARRAY,
                         "Viscous coefficients [N m s/rad], one per chain joint or one for "
                         "all. Unset: the URDF's <dynamics damping>.", RUNTIME),
    "coulomb_friction": (None, ParameterType.PARAMETER_DOUBLE_ARRAY,
                         "Coulomb friction [N m], one per chain joint or one for all. Unset: "
                         "the URDF's <dynamics friction>.", RUNTIME),
    "payload_link": ("", ParameterType.PARAMETER_STRING,
                     "Link carrying a payload at start-up (empty: none); see set_payload.",
                     READ_ONLY),
    "payload_mass": (0.0, ParameterType.PARAMETER_DOUBLE, "Payload mass [kg].", READ_ONLY),
    "payload_com": ([0.0, 0.0, 0.0], ParameterType.PARAMETER_DOUBLE_ARRAY,
                    "Payload centre of mass in the payload link frame [m].", READ_ONLY),
    "payload_inertia": ([0.0, 0.0, 0.0, 0.0, 0.0, 0.0], ParameterType.PARAMETER_DOUBLE_ARRAY,
                        "Payload inertia about its centre of mass [kg m^2]: ixx ixy ixz iyy "
                        "iyz izz.", READ_ONLY),
    "max_payload_mass": (5.0, ParameterType.PARAMETER_DOUBLE,
                         "Largest payload mass [kg] accepted at start-up and by "
                         "~/set_payload.", READ_ONLY),
    "allow_model_changes": (True, ParameterType.PARAMETER_BOOL,
                            "Whether ~/set_payload may change the model while running.",
                            READ_ONLY),
    "marker_rate": (10.0, ParameterType.PARAMETER_DOUBLE,
                    "Rate [Hz] of the rviz2 markers and the tip wrench; 0 disables them.", RUNTIME),
    "diagnostics_rate": (1.0, ParameterType.PARAMETER_DOUBLE,
                         "Rate [Hz] of /diagnostics.", RUNTIME),
    "thread_priority": (0, ParameterType.PARAMETER_INTEGER,
                        "SCHED_FIFO priority (1-99) of the thread that takes joint_states and "
                        "publishes the commands, like ros2_control's controller_manager "
                        "thread_priority; 0: the normal scheduler. Needs permission (root, or "
                        "an rtprio limit in /etc/security/limits.conf): without it the node "
                        "warns and runs on the normal scheduler.", READ_ONLY),
}


# per-joint parameters (n values or one for all) → whether 0 is excluded
PER_JOINT = {"kp": False, "kd": False, "viscous_friction": False, "coulomb_friction": False,
             "max_torque_rate": True, "start_tolerance": True, "max_tracking_error": True,
             "hold_damping": False}


def descriptor(name):
    default, kind, text, read_only = PARAMETERS[name]
    d = ParameterDescriptor(name=name, type=kind, description=text, read_only=read_only)
    if name in ("torque_limit_scale", "velocity_limit_scale"):
        d.floating_point_range = [FloatingPointRange(from_value=1e-3, to_value=1.0)]
    if name == "thread_priority":
        d.integer_range = [IntegerRange(from_value=0, to_value=99, step=1)]
    return d


def per_joint(values, dof, name):
    """A per-joint list from a parameter: n values, or 1 value for all; None when unset."""
    if values is None:
        return None
    values = list(values)
    if len(values) == 1:
        values = values * dof
    if len(values) != dof:
        raise ValueError(f"{name} needs 1 or {dof} values, got {len(values)}")
    return values


def validate(values, dof):
    """Reason why the parameter values (a dict, name → value) are unacceptable, else None."""
    try:
        for name, positive in PER_JOINT.items():
            gains = per_joint(values.get(name), dof, name)
            if gains is not None and any(not math.isfinite(v) or v < 0 or (positive and v == 0)
                                         for v in gains):
                return f"{name} must be finite and {'> 0' if positive else '>= 0'}"
    except ValueError as exc:
        return str(exc)
    checks = {
        "torque_limit_scale": lambda v: 0.0 < v <= 1.0,
        "stale_timeout": lambda v: 0.0 < v < math.inf,
        "cross_check_rate": lambda v: 0.0 <= v <= 1000.0,
        "cross_check_tolerance": lambda v: 0.0 < v < math.inf,
        "marker_rate": lambda v: 0.0 <= v <= 100.0,
        "diagnostics_rate": lambda v: 0.0 < v <= 100.0,
        "thread_priority": lambda v: 0 <= v <= 99,
        "velocity_limit_scale": lambda v: 0.0 < v <= 1.0,
        "max_payload_mass": lambda v: 0.0 <= v < math.inf,
        "payload_mass": lambda v: 0.0 <= v < math.inf,
    }
    for name, ok in checks.items():
        if name in values and not ok(values[name]):
            return f"{name}={values[name]} is out of range"
    if "gravity" in values and (len(values["gravity"]) != 3
                                or not all(math.isfinite(v) for v in values["gravity"])):
        return "gravity needs 3 finite values"
    if "backend" in values and values["backend"] not in ("pinocchio", "rnea"):
        return f"backend must be 'pinocchio' or 'rnea', got {values['backend']!r}"
    return None
