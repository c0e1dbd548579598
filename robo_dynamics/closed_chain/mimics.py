"""A URDF's <mimic> joints beside loop closures. A mimic couples a joint to its master by a
constant ratio, q_j = m q_master + offset: the way ROS descriptions stand in for a loop
they leave out (a gripper's four-bar, a parallelogram). Where the loops are given, they
determine such a joint exactly: the mimic gives way to them, and how far its ratio is from
the loop's at the reference pose is noted (the model's warnings). A mimic joint the loops
leave free (with the motors held it can still move) whose master is a motor is kept: the
joint becomes an actuated joint of the mechanism driven through the coupling (an ideal
transmission: θ = G θ_motors + offset, the motors' torques Gᵀτ by virtual work), so one
motor drives both fingers of a gripper. One whose master is not a motor is refused with
the reason.
"""

import collections

import numpy as np

from ..errors import URDFError

FREE = 1e-9        # a joint's motion per unit of the free motions: above this it is free
ROUNDING = 1e-12   # rad/rad: a rate difference below this is reported as 0

Coupling = collections.namedtuple("Coupling", ["motors", "G", "offset"])
Coupling.__doc__ = """Coupled motors: the mechanism's actuated joints θ (k,) = G θ_m + offset
for the motors' positions θ_m (names `motors`, k_m,); G (k, k_m)."""


def motor_names(chain):
    """The names of `chain`'s motors: its actuated joints, or the motors that drive them
    through a coupling."""
    return chain.actuated_joints if chain.coupling is None else chain.coupling.motors


def with_mimics(tree, build, actuated, mimics):
    """(chain, notes): build(actuated) → ClosedChain of `tree`, its actuated joints extended
    by each mimic joint the loops leave free whose master is a motor (in the URDF's order,
    until none is free), its `coupling` set; the notes of superseded_mimics. URDFError for
    a free mimic whose master is not a motor."""
    actuated, kept = list(actuated), {}
    for joint, (master, _, _) in mimics.items():
        if master not in tree.joint_names:
            raise URDFError(f"joint '{joint}': <mimic joint=\"{master}\">: no such movable "
                            "joint in the mechanism")
    while True:
        chain = build(tuple(actuated))
        free = [joint for joint in mimics if joint not in actuated
                and joint in _free_joints(chain)]
        if not free:
            break
        joint = free[0]
        master, multiplier, offset = mimics[joint]
        if master not in actuated:
            raise URDFError(
                f"joint '{joint}' mimics '{master}', but the loops do not determine it: "
                f"with the motors {list(chain.actuated_joints)} held it can still move, and "
                f"'{master}' is not a motor. Name the joint or its master a motor in "
                "actuated_joints, or add the loop closure that determines it")
        kept[joint] = (master, multiplier, offset)
        actuated.append(joint)
    if kept:
        chain.coupling = _coupling(actuated, kept)
    return chain, superseded_mimics(chain, mimics, kept)


def _coupling(actuated, kept):
    """The Coupling of the actuated joints `actuated`, those in `kept` ({joint: (master,
    multiplier, offset)}) following their masters."""
    motors = [name for name in actuated if name not in kept]
    G, offset = np.zeros((len(actuated), len(motors))), np.zeros(len(actuated))
    for row, name in enumerate(actuated):
        if name in motors:
            G[row, motors.index(name)] = 1.0
        else:
            master, multiplier, constant = kept[name]
            source = actuated.index(master)          # placed before: kept in order
            G[row] = multiplier * G[source]
            offset[row] = multiplier * offset[source] + constant
    return Coupling(tuple(motors), G, offset)


def _free_joints(chain):
    """Names of the joints that can move with the chain's actuated joints held."""
    tree, q = chain.tree, chain.reference
    held = np.zeros((len(chain.actuated), tree.dof))
    held[np.arange(len(chain.actuated)), list(chain.actuated)] = 1.0
    A = np.vstack((chain.constraint_jacobian(q), held))
    _, sigma, Vt = np.linalg.svd(A)
    rank = int(np.sum(sigma > 1e-10 * max(1.0, sigma[0])))
    free = Vt[rank:]
    return {name for j, name in enumerate(tree.joint_names)
            if len(free) and np.abs(free[:, j]).max() > FREE}


def superseded_mimics(chain, mimics, kept=()):
    """Notes (tuple of str) on each mimic joint of `mimics` ({joint: (master, multiplier,
    offset)}): kept as a coupling (`kept`); a motor's, not applied; or determined by
    `chain`'s loops: along the motion the mimics describe, the loop's rate q̇_j at the
    reference against the mimic's m q̇_master."""
    tree, q = chain.tree, chain.reference
    B = chain.velocity_transformation(q) if chain.fully_actuated else None
    notes = []
    for joint, (master, multiplier, offset) in mimics.items():
        j = tree.joint_index(joint)
        if joint in kept:
            notes.append(f"joint '{joint}' follows '{master}' by its <mimic> (multiplier "
                         f"{multiplier:g}, offset {offset:g}): the loops leave it free, so "
                         "the coupling is kept (one motor drives both)")
            continue
        if j in chain.actuated:
            notes.append(f"joint '{joint}' is a motor: its <mimic> of '{master}' (multiplier "
                         f"{multiplier:g}) is not applied; command it as the mimic says")
            continue
        if B is None:
            continue
        qd = B @ _mimic_rates(chain, mimics)
        error = abs(qd[j] - multiplier * qd[tree.joint_index(master)])
        error = error if error > ROUNDING else 0.0
        notes.append(f"joint '{joint}': its <mimic> of '{master}' (multiplier {multiplier:g}, "
                     f"offset {offset:g}) gives way to the loops, which determine it; at the "
                     f"reference pose its rate is {error:.3g} rad/rad off the loop's")
    return tuple(notes)


def _mimic_rates(chain, mimics):
    """θ̇ (k,) of the motion the mimics describe: 1 rad/s for each motor that mimics none,
    a motor mimicking another at its multiple of that one's rate."""
    names = list(chain.actuated_joints)
    rates = np.ones(len(names))
    for k, name in enumerate(names):
        master, multiplier, _ = mimics.get(name, (None, 1.0, 0.0))
        if master in names and master not in mimics:
            rates[k] = multiplier
    return rates
