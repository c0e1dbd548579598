"""A URDF's <mimic> joints beside loop closures. A mimic couples a joint to its master by a
constant ratio, q_j = m q_master + offset: the way ROS descriptions stand in for a loop
they leave out (a gripper's four-bar, a parallelogram). Where the loops are given, they
determine such a joint exactly: the mimic gives way to them, and how far its ratio is from
the loop's at the reference pose is noted (the model's warnings). A mimic joint the loops
leave free (with the motors held it can still move) is refused with the reason: a coupling
beside the loops is not modelled yet.
"""

import numpy as np

from ..errors import URDFError

FREE = 1e-9        # a joint's motion per unit of the free motions: above this it is free
ROUNDING = 1e-12   # rad/rad: a rate difference below this is reported as 0


def superseded_mimics(chain, mimics):
    """Notes (tuple of str) on each mimic joint of `mimics` ({joint: (master, multiplier,
    offset)}) that `chain`'s loops determine given its motors: along the motion the mimics
    describe, the loop's rate q̇_j at the reference against the mimic's m q̇_master; a motor's
    mimic is not applied. URDFError for one the loops leave free."""
    tree, q = chain.tree, chain.reference
    Phi_q = chain.constraint_jacobian(q)
    held = np.zeros((len(chain.actuated), tree.dof))
    held[np.arange(len(chain.actuated)), list(chain.actuated)] = 1.0
    # the motions the loops allow with the motors held: the null space of [Φ_q; S]
    A = np.vstack((Phi_q, held))
    _, sigma, Vt = np.linalg.svd(A)
    rank = int(np.sum(sigma > 1e-10 * max(1.0, sigma[0])))
    free = Vt[rank:]
    B = chain.velocity_transformation(q) if chain.fully_actuated else None
    notes = []
    for joint, (master, multiplier, offset) in mimics.items():
        j = tree.joint_index(joint)
        if master not in tree.joint_names:
            raise URDFError(f"joint '{joint}': <mimic joint=\"{master}\">: no such movable "
                            "joint in the mechanism")
        if len(free) and np.abs(free[:, j]).max() > FREE:
            raise URDFError(
                f"joint '{joint}' mimics '{master}', but the loops do not determine it: "
                f"with the motors {list(chain.actuated_joints)} held it can still move. A "
                "mimic coupling beside loop closures is not modelled yet: name the joint a "
                "motor in actuated_joints, or add the loop closure that determines it")
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
