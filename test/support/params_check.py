"""What makes a params file's section one dynamics_node takes: shared by the shipped files'
test (test_launch_and_config.py) and the docs' parameter blocks (test_docs.py)."""

from conftest import REPO, flat
from robo_dynamics.ros import parameters
from robo_dynamics.ros.parameter_tables import JOINT_CONSTRAINTS


def check_section(section, urdf=None, dof=6):
    """`section` (a ros__parameters mapping): every key a parameter the node declares (or a
    per-joint constraint, or a closed linkage's motors and loops, which must then close on
    `urdf`, a file of urdf/ or a path), every value valid by the node's own checks for `dof` joints."""
    values = flat(section)
    joint = {name for name in values if name.startswith("constraints.")
             and name.count(".") == 2 and name.rsplit(".", 1)[1] in JOINT_CONSTRAINTS}
    # a closed linkage's motors and loop closures (loop_closures.<name>.<field> declared by
    # the node once the names are known): the closed-chain library must load the linkage
    closed_chain = {name for name in values
                    if name == "actuated_joints" or name.startswith("loop_closures.")}
    if closed_chain:
        from robo_dynamics.closed_chain import load_closed_chain
        linkage = load_closed_chain(REPO / "urdf" / urdf if isinstance(urdf, str) else urdf,
                                    parameters=section)
        assert linkage.fully_actuated and linkage.closures
    unknown = set(values) - joint - closed_chain - set(parameters.DYNAMICS_NODE)
    assert not unknown, f"not parameters of dynamics_node: {sorted(unknown)}"
    assert all(isinstance(values[name], float) and values[name] >= 0 for name in joint)
    problem = parameters.validate(values, dof)
    assert problem is None, problem
