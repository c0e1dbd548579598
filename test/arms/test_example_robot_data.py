"""Every URDF that example-robot-data ships, every candidate tip: each chain loads and equals
Pinocchio, or is refused for a reason on a short allow-list (docs/testing.md: "Real-world URDFs").

Candidate tips are the leaf links reached from the root through at least one movable joint
(what load_robot lists when the tip is ambiguous), found here with ElementTree, not with
robo_dynamics. The reference is Pinocchio on the same URDF with the joints off the chain at 0
(backend "pinocchio"), and, for chains with mimic joints, Pinocchio's own mimic joints.
C(q, q̇) is compared on the chains of FULL (full_check_tips says which and why).

`make corpus` prints the table of docs/testing.md from the same run:
    python test/arms/test_example_robot_data.py
"""

from conftest import require_example_robots
require_example_robots(__name__)   # it reads example-robot-data: without it, skipped saying why

import collections
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import robo_dynamics as rd
from conftest import EXAMPLE_ROBOTS, rel, worst_disagreement
from pinocchio_mimic import NativeMimic
from robo_dynamics.backends.cross_check import QUANTITIES

# reason → what the URDFError says. Each is a property of the file, not of the library:
REFUSALS = {
    # an inertia in the chain more than rounding away from positive semi-definite: it can
    # make M(q) indefinite (romeo_laas_small: hip pitch links, −5 % of the largest moment)
    "inertia not positive semi-definite": "inertia is not positive semi-definite",
    # a mimic joint whose master moves another branch: a serial chain cannot carry it
    "mimic of a joint on another branch": "which is not on the chain",
    # a <mimic joint="..."> naming a joint the file does not have (alex_psyonic_hands)
    "mimic of a joint the file does not define": "no joint of that name",
    # nothing with mass or inertia beyond a joint: M(q) would be singular
    "massless end of the chain": "no mass or inertia beyond it",
}


def candidate_tips(path):
    root = ET.parse(path).getroot()
    joints = root.findall("joint")
    parent_joint = {joint.find("child").get("link"): joint for joint in joints}
    parents = {joint.find("parent").get("link") for joint in joints}
    tips = []
    for leaf in sorted(set(parent_joint) - parents):
        link = leaf
        while link in parent_joint:
            if parent_joint[link].get("type") != "fixed":
                tips.append(leaf)
                break
            link = parent_joint[link].find("parent").get("link")
    return tips


def joint_kinds(path, tip):
    """(number of movable joints from the root to tip, their kinds: (type, is a mimic))."""
    root = ET.parse(path).getroot()
    parent_joint = {joint.find("child").get("link"): joint for joint in root.findall("joint")}
    kinds, link = [], tip
    while link in parent_joint:
        joint = parent_joint[link]
        if joint.get("type") != "fixed":
            kinds.append((joint.get("type"), joint.find("mimic") is not None))
        link = joint.find("parent").get("link")
    return len(kinds), set(kinds)


def full_check_tips(path, tips):
    """The tips whose chains are also checked for C(q, q̇): the longest chain of the file,
    and every chain with a kind of joint that one lacks. The generated C(q, q̇) depends on
    the kinds of joints along a chain, not on their names; its code generation is what
    costs most here (≈ 60 % of the corpus's time)."""
    kinds = {tip: joint_kinds(path, tip) for tip in tips}
    longest = max(tips, key=lambda tip: kinds[tip][0]) if tips else None
    return {tip for tip in tips
            if tip == longest or not kinds[tip][1] <= kinds[longest][1]}


FILES = sorted(EXAMPLE_ROBOTS.rglob("*.urdf"))
CHAINS = [(path, tip) for path in FILES for tip in candidate_tips(path)]
FULL = {(path, tip) for path in FILES
        for tip in full_check_tips(path, candidate_tips(path))}


def chain_id(chain):
    path, tip = chain
    return f"{path.relative_to(EXAMPLE_ROBOTS)}:{tip}"


def sample_state(robot, seed=0):
    rng = np.random.default_rng(seed)
    lower = np.maximum(robot.lower, -1.0)
    upper = np.where(robot.upper > robot.lower, np.minimum(robot.upper, 1.0), 1.0)
    return (rng.uniform(lower, upper), rng.uniform(-1.0, 1.0, robot.dof),
            rng.uniform(-2.0, 2.0, robot.dof))


def check_chain(path, tip):
    """("loaded", worst relative error, number of warnings) or ("refused", reason). Every
    quantity of rd.cross_check, C(q, q̇) only on the chains of FULL."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", rd.ModelWarning)
            robot = rd.load_robot(path, tip_link=tip)
    except rd.URDFError as error:
        reasons = [name for name, text in REFUSALS.items() if text in str(error)]
        assert reasons, f"refused for a reason not on the allow-list: {error}"
        return "refused", reasons[0]
    assert len(caught) == len(robot.warnings)
    q, qd, qdd = sample_state(robot)
    ours, pinocchio = rd.make_solver(robot, "rnea"), rd.make_solver(robot, "pinocchio")
    quantities = [name for name in QUANTITIES
                  if (path, tip) in FULL or name != "coriolis_matrix"]
    worst, report = worst_disagreement(ours, pinocchio, q, qd, qdd, quantities)
    if robot.is_coupled:
        native = NativeMimic(robot)
        for solver in (ours, pinocchio):
            worst = max(worst,
                        rel(solver.inverse_dynamics(q, qd, qdd),
                            native.inverse_dynamics(q, qd, qdd)),
                        rel(solver.mass_matrix(q), native.mass_matrix(q)),
                        rel(solver.gravity(q), native.gravity(q)),
                        rel(solver.jacobian(q), native.jacobian(q)))
    assert worst <= 1e-9, report
    return "loaded", worst, len(robot.warnings)


@pytest.mark.parametrize("chain", CHAINS, ids=[chain_id(c) for c in CHAINS])
def test_every_chain_loads_and_equals_pinocchio_or_is_refused_for_a_known_reason(chain):
    check_chain(*chain)


NAMED = {   # the chains the issue named, by what a user would type
    "TIAGo arm": ("tiago_description/robots/tiago.urdf", "torso_fixed_link", "arm_7_link"),
    "Allegro index finger": ("allegro_hand_description/urdf/allegro_right_hand.urdf", None,
                             "link_3.0_tip"),
    "Z1 arm on B1": ("b1_description/urdf/b1-z1.urdf", None, "gripperMover"),
    "Panda to a finger": ("panda_description/urdf/panda.urdf", None, "panda_leftfinger"),
    "PR2 gripper finger tip (mimic joints)": ("pr2_description/urdf/pr2.urdf", None,
                                              "l_gripper_l_finger_tip_link"),
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_chains_load(name):
    path, base, tip = NAMED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = rd.load_robot(EXAMPLE_ROBOTS / path, base_link=base, tip_link=tip)
    worst, report = worst_disagreement(rd.make_solver(robot, "rnea"),
                                       rd.make_solver(robot, "pinocchio"),
                                       *sample_state(robot, seed=3))
    assert robot.dof >= 2 and worst <= 1e-9, report


def test_links_off_the_chain_are_not_checked():
    """TIAGo's base antenna has an inertia that is not positive semi-definite (−3.5e-8 kg·m²);
    it does not enter the arm's dynamics, so the arm loads without a word about it."""
    from robo_dynamics.spatial.inertia import inertia_tensor, rigid_body_problems
    path = EXAMPLE_ROBOTS / "tiago_description/robots/tiago.urdf"
    antenna = ET.parse(path).getroot().find("link[@name='base_antenna_left_link']/inertial")
    values = {key: float(value) for key, value in antenna.find("inertia").attrib.items()}
    errors, _ = rigid_body_problems(float(antenna.find("mass").get("value")),
                                    inertia_tensor(*(values[key] for key in (
                                        "ixx", "ixy", "ixz", "iyy", "iyz", "izz"))))
    assert errors and "not positive semi-definite" in errors[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", rd.ModelWarning)
        robot = rd.load_robot(path, base_link="torso_fixed_link", tip_link="arm_7_link")
    assert not robot.warnings and robot.dof == 8     # torso lift + 7 arm joints


def table():
    """Markdown rows: files, chains, loaded (with warnings), refused by reason, worst error."""
    loaded, with_warnings, worst = 0, 0, 0.0
    refused = collections.Counter()
    for path, tip in CHAINS:
        result = check_chain(path, tip)
        if result[0] == "loaded":
            loaded += 1
            with_warnings += result[2] > 0
            worst = max(worst, result[1])
        else:
            refused[result[1]] += 1
    rows = [f"| URDF files | {len(FILES)} |", f"| candidate chains (file × tip) | {len(CHAINS)} |",
            f"| loaded | {loaded} ({with_warnings} with a ModelWarning) |",
            f"| worst relative difference from Pinocchio | {worst:.1e} |"]
    rows += [f"| refused: {reason} | {refused[reason]} |" for reason in REFUSALS]
    return "\n".join(["| example-robot-data 6.0.0 | |", "| --- | --- |"] + rows)


if __name__ == "__main__":
    print(table())
