"""A corpus of ≥ 100 broken or unusual URDFs generated from the shipped ones: each loads
(and then agrees with Pinocchio; with a ModelWarning naming the link where the inertia is
doubtful) or raises URDFError naming the element it is about. No other exception escapes."""

import copy
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import robo_dynamics as rd
from conftest import SHIPPED, rel, worst_disagreement
from pinocchio_mimic import NativeMimic

SOURCES = {name: ET.parse(SHIPPED / f"{name}.urdf").getroot()
           for name in ("rd_ur5e", "planar_2link")}


def _joint(root, index):
    return [j for j in root.iter("joint") if j.get("type") != "fixed"][index]


def _link(root, index):
    return [l for l in root.iter("link") if l.find("inertial") is not None][index]


def mutations():
    """(case id, XML text, expected): expected is the fragment the error must contain, None
    if it must load, or ("warning", fragment) if it must load with that ModelWarning."""
    cases = []
    for source, root in SOURCES.items():
        joints = [j for j in root.iter("joint") if j.get("type") != "fixed"]
        links = [l for l in root.iter("link") if l.find("inertial") is not None]
        for index, joint in enumerate(joints):
            name = joint.get("name")

            def edit(function, case, fragment, joint_index=index):
                tree = copy.deepcopy(root)
                function(tree, _joint(tree, joint_index))
                cases.append((f"{source}:{name}:{case}", ET.tostring(tree, encoding="unicode"),
                              fragment))

            edit(lambda t, j: j.attrib.pop("type"), "no-type", name)
            edit(lambda t, j: j.remove(j.find("parent")), "no-parent", name)
            edit(lambda t, j: j.find("parent").set("link", "nowhere"), "unknown-parent", name)
            edit(lambda t, j: j.find("child").set("link", "nowhere"), "unknown-child", name)
            edit(lambda t, j: j.find("origin").set("xyz", "0 0"), "short-xyz", name)
            edit(lambda t, j: j.find("origin").set("rpy", "a b c"), "bad-rpy", name)
            edit(lambda t, j: j.find("axis").set("xyz", "0 0 0"), "zero-axis", name)
            edit(lambda t, j: j.find("axis").set("xyz", "0 0 nan"), "nan-axis", name)
            edit(lambda t, j: j.remove(j.find("limit")), "no-limit", name)
            edit(lambda t, j: j.find("limit").set("effort", "-1"), "negative-effort", name)
            edit(lambda t, j: j.find("limit").set(
                "lower", str(float(j.find("limit").get("upper")) + 1.0)), "lower-above-upper",
                name)
            edit(lambda t, j: j.set("type", "floating"), "floating", name)
            edit(lambda t, j: j.set("type", "planar"), "planar", name)
            edit(lambda t, j: j.set("type", "spherical"), "unknown-type", name)
            edit(lambda t, j: ET.SubElement(j, "dynamics", damping="-0.5"), "negative-damping",
                 name)
            if index > 0:
                edit(lambda t, j: ET.SubElement(j, "mimic", joint=joints[0].get("name"),
                                                multiplier="-0.6", offset="0.2"),
                     "mimic", None)
                edit(lambda t, j: j.set("name", joints[0].get("name")), "duplicate-name",
                     joints[0].get("name"))
                edit(lambda t, j: j.find("child").set("link", _parent_of_first(t)), "loop-to-base",
                     _parent_of_first(root))
            # valid but unusual
            edit(lambda t, j: j.find("axis").set("xyz", "0 0 3"), "unnormalised-axis", None)
            edit(lambda t, j: j.set("type", "continuous"), "continuous", None)
            edit(lambda t, j: ET.SubElement(j, "dynamics", damping="0.3", friction="0.1"),
                 "with-dynamics", None)
            edit(lambda t, j: j.append(ET.Element("safety_controller", k_velocity="10")),
                 "safety-controller", None)
        for index, link in enumerate(links):
            name = link.get("name")

            def edit_link(function, case, fragment, link_index=index):
                tree = copy.deepcopy(root)
                function(_link(tree, link_index).find("inertial"))
                cases.append((f"{source}:{name}:{case}", ET.tostring(tree, encoding="unicode"),
                              fragment))

            edit_link(lambda i: i.find("mass").set("value", "-1"), "negative-mass", name)
            edit_link(lambda i: i.find("mass").set("value", "abc"), "bad-mass", name)
            edit_link(lambda i: i.remove(i.find("mass")), "no-mass", name)
            edit_link(lambda i: i.remove(i.find("inertia")), "no-inertia", name)
            edit_link(lambda i: i.find("inertia").set("ixx", "-1"), "not-psd", name)
            edit_link(lambda i: i.find("inertia").set("izz", "inf"), "inf-inertia", name)
            edit_link(lambda i: _triangle(i), "triangle", ("warning", f"link '{name}'"))
            # massless: fine for a point-mass link unless nothing is left beyond the last joint;
            # a massless link with inertia is doubtful but M stays positive definite
            if not _zero_inertia(link.find("inertial")):
                zero_mass = ("warning", f"link '{name}': mass is 0 but the inertia is not")
            else:
                zero_mass = None if index < len(links) - 1 else "no mass or inertia beyond it"
            edit_link(lambda i: i.find("mass").set("value", "0"), "zero-mass", zero_mass)
            edit_link(lambda i: i.find("origin").set("rpy", "0.3 -0.2 0.1"), "rotated-inertial",
                      None)
        transmission = ET.fromstring(
            '<transmission name="t1"><type>transmission_interface/SimpleTransmission</type>'
            f'<joint name="{joints[0].get("name")}"><hardwareInterface>hardware_interface/'
            'EffortJointInterface</hardwareInterface></joint><actuator name="m1">'
            '<mechanicalReduction>50</mechanicalReduction></actuator></transmission>')
        for extra, case in ((ET.Element("gazebo"), "gazebo-tag"), (transmission, "transmission"),
                            (ET.Element("material", name="red"), "material")):
            tree = copy.deepcopy(root)
            tree.append(extra)
            cases.append((f"{source}:{case}", ET.tostring(tree, encoding="unicode"), None))
        tree = copy.deepcopy(root)
        tree.append(copy.deepcopy(tree.find("link")))
        cases.append((f"{source}:duplicate-link", ET.tostring(tree, encoding="unicode"),
                      tree.find("link").get("name")))
        tree = copy.deepcopy(root)
        ET.SubElement(tree, "link", name="orphan")
        cases.append((f"{source}:second-root", ET.tostring(tree, encoding="unicode"), "orphan"))
        text = ET.tostring(root, encoding="unicode")
        cases.append((f"{source}:truncated", text[: len(text) // 2], "not well-formed"))
        cases.append((f"{source}:wrong-root", text.replace("<robot", "<model", 1)
                      .replace("</robot>", "</model>"), "<model>"))
    return cases


def _parent_of_first(tree):
    first = [j for j in tree.iter("joint") if j.get("type") != "fixed"][0]
    return first.find("parent").get("link")


def _zero_inertia(inertial):
    return all(float(v) == 0.0 for v in inertial.find("inertia").attrib.values())


def _triangle(inertial):
    inertia = inertial.find("inertia")
    inertia.set("ixx", "0.01")
    inertia.set("iyy", "0.01")
    inertia.set("izz", "0.5")


CORPUS = mutations()


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 100
    assert sum(fragment is None for _, _, fragment in CORPUS) >= 20


@pytest.mark.parametrize("case, text, fragment", CORPUS, ids=[c[0] for c in CORPUS])
def test_broken_or_unusual_urdf(case, text, fragment):
    if fragment is None or fragment[0] == "warning":
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            robot = rd.load_robot(text)
        said = [str(w.message) for w in caught if issubclass(w.category, rd.ModelWarning)]
        assert list(robot.warnings) == said
        if fragment is None:
            assert not said, said
        else:
            assert len(said) == 1 and fragment[1] in said[0], said
        ours, ref = rd.make_solver(robot, "rnea"), rd.make_solver(robot, "pinocchio")
        q = np.linspace(-1.0, 1.0, robot.dof)
        if robot.is_coupled:    # both backends share the coupling: Pinocchio's mimic joints
            native = NativeMimic(robot)
            assert rel(ours.inverse_dynamics(q, 0.5 * q, -q),
                       native.inverse_dynamics(q, 0.5 * q, -q)) < 1e-9, case
            assert rel(ours.mass_matrix(q), native.mass_matrix(q)) < 1e-9, case
            assert rel(ours.jacobian(q), native.jacobian(q)) < 1e-9, case
        worst, report = worst_disagreement(ours, ref, q, 0.5 * q, -q)
        assert worst < 1e-9, (case, report)
        return
    with pytest.raises(rd.URDFError) as info:
        rd.load_robot(text)
    assert fragment in str(info.value), (case, str(info.value))


def test_xacro_errors(tmp_path):
    cases = {
        "undefined.urdf.xacro": ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">'
                                 '<link name="${nope}"/></robot>', "nope"),
        "bad_macro.urdf.xacro": ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">'
                                 '<xacro:missing_macro/></robot>', "missing_macro"),
        "bad_include.urdf.xacro": ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">'
                                   '<xacro:include filename="no_such_file.xacro"/></robot>',
                                   "no_such_file"),
        "not_xml.urdf.xacro": ("<robot", "xacro expansion failed"),
    }
    for filename, (text, fragment) in cases.items():
        path = tmp_path / filename
        path.write_text(text)
        with pytest.raises(rd.URDFError) as info:
            rd.load_robot(path)
        assert filename in str(info.value) and fragment in str(info.value), str(info.value)
