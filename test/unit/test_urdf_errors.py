"""Every way a robot description can be unusable gives a URDFError naming the element."""

import pytest

import robo_dynamics as rd

INERTIAL = ('<inertial><mass value="{m}"/><inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" '
            'iyz="0" izz="{izz}"/></inertial>')


def link(name, m=1.0, ixx=0.1, iyy=0.1, izz=0.1, inertial=True):
    body = INERTIAL.format(m=m, ixx=ixx, iyy=iyy, izz=izz) if inertial else ""
    return f'<link name="{name}">{body}</link>'


def joint(name, parent, child, kind="revolute", limit='<limit effort="10" velocity="1" '
          'lower="-1" upper="1"/>', axis='<axis xyz="0 0 1"/>', extra=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/>{axis}{limit}{extra}</joint>')


def robot(*parts):
    return '<robot name="r">' + "".join(parts) + "</robot>"


GOOD = [link("a"), link("b"), joint("j", "a", "b")]

CASES = {
    "not xml": ("<robot name='r'><link name='a'>", ["not well-formed XML"]),
    "wrong root": ("<model><link name='a'/></model>", ["root element is <model>"]),
    "bad number": (robot(link("a", m="abc"), link("b"), joint("j", "a", "b")),
                   ["link 'a'", '<mass value="abc">', "not a number"]),
    "nan inertia": (robot(link("a"), link("b", ixx="nan"), joint("j", "a", "b")),
                    ["link 'b'", "ixx", "not finite"]),
    "short xyz": (robot(link("a"), link("b"), joint("j", "a", "b", axis='<axis xyz="0 1"/>')),
                  ["joint 'j'", '<axis xyz="0 1">', "expected 3 number(s), got 2"]),
    "missing type": (robot(link("a"), link("b"),
                           '<joint name="j"><parent link="a"/><child link="b"/></joint>'),
                     ["joint[@name='j']", "type"]),
    "unknown type": (robot(link("a"), link("b"), joint("j", "a", "b", kind="spherical")),
                     ["joint[@name='j']", "spherical"]),
    "missing parent element": (robot(link("a"), link("b"),
                                     '<joint name="j" type="fixed"><child link="b"/></joint>'),
                               ["joint[@name='j']", "parent"]),
    "unknown parent": (robot(link("a"), link("b"), joint("j", "nowhere", "b")),
                       ["joint 'j'", "parent link 'nowhere' is not defined"]),
    "unknown child": (robot(link("a"), joint("j", "a", "ghost")),
                      ["joint 'j'", "child link 'ghost' is not defined"]),
    "two parents": (robot(link("a"), link("b"), link("c"), joint("j", "a", "c"),
                          joint("k", "b", "c")), ["link 'c' has two parent joints", "'j'", "'k'"]),
    "cycle": (robot(link("a"), link("b"), joint("j", "a", "b"), joint("k", "b", "a")),
              ["cycle"]),
    "cycle below the root": (robot(link("r0"), link("a"), link("b"), link("c"),
                                   joint("j0", "r0", "a"), joint("j", "b", "c"),
                                   joint("k", "c", "b")), ["cycle"]),
    "two roots": (robot(link("a"), link("b"), link("c"), joint("j", "a", "b")),
                  ["more than one root link", "'a'", "'c'"]),
    "duplicate link": (robot(link("a"), link("a"), link("b"), joint("j", "a", "b")),
                       ["duplicate link name 'a'"]),
    "duplicate joint": (robot(link("a"), link("b"), link("c"), joint("j", "a", "b"),
                              joint("j", "b", "c")), ["duplicate joint name 'j'"]),
    "negative mass": (robot(link("a"), link("b", m=-1.0), joint("j", "a", "b")),
                      ["link 'b'", "mass must be finite and >= 0"]),
    "not positive semi-definite": (robot(link("a"), link("b", ixx=-0.1), joint("j", "a", "b")),
                                   ["link 'b'", "not positive semi-definite"]),
    "no inertia tensor": (robot(link("a"), '<link name="b"><inertial><mass value="1"/>'
                                '</inertial></link>', joint("j", "a", "b")),
                          ["link 'b'", "no <inertia>"]),
    "zero axis": (robot(link("a"), link("b"), joint("j", "a", "b", axis='<axis xyz="0 0 0"/>')),
                  ["joint 'j' (revolute)", "zero vector"]),
    "missing limit": (robot(link("a"), link("b"), joint("j", "a", "b", limit="")),
                      ["joint 'j' (revolute)", "missing <limit effort=... velocity=...>"]),
    "lower above upper": (robot(link("a"), link("b"), joint(
        "j", "a", "b", limit='<limit effort="1" velocity="1" lower="1" upper="-1"/>')),
        ["joint 'j' (revolute)", "lower 1.0 is above upper -1.0"]),
    "negative effort": (robot(link("a"), link("b"), joint(
        "j", "a", "b", limit='<limit effort="-5" velocity="1" lower="-1" upper="1"/>')),
        ["joint 'j' (revolute)", "effort and velocity must be >= 0"]),
    "negative damping": (robot(link("a"), link("b"), joint(
        "j", "a", "b", extra='<dynamics damping="-1" friction="0"/>')),
        ["joint 'j' (revolute)", "damping and friction must be >= 0"]),
    "floating joint": (robot(link("a"), link("b"), joint("j", "a", "b", kind="floating",
                                                        limit="", axis="")),
                       ["joint 'j' (floating)", "only revolute, continuous, prismatic"]),
    "planar joint": (robot(link("a"), link("b"), joint("j", "a", "b", kind="planar", limit="")),
                     ["joint 'j' (planar)", "only revolute, continuous, prismatic"]),
    "mimic of an unknown joint": (
        robot(link("a"), link("b"), link("c"), joint("j", "a", "b"),
              joint("k", "b", "c", extra='<mimic joint="ghost"/>')),
        ["joint 'k'", '<mimic joint="ghost">', "no joint of that name"]),
    "mimic cycle": (
        robot(link("a"), link("b"), link("c"), joint("j", "a", "b", extra='<mimic joint="k"/>'),
              joint("k", "b", "c", extra='<mimic joint="j"/>')),
        ["mimic joints form a cycle", "j -> k -> j"]),
    "mimic of a fixed joint": (
        robot(link("a"), link("b"), link("c"), joint("j", "a", "b", kind="fixed"),
              joint("k", "b", "c", extra='<mimic joint="j"/>')),
        ["joint 'k'", "mimics 'j', a fixed joint"]),
    "only fixed joints": (robot(link("a"), link("b"), joint("j", "a", "b", kind="fixed")),
                          ["no movable joint below base_link 'a'"]),
    "no links": ("<robot name='r'></robot>", ["no <link>"]),
}


# Usable but not a rigid body: loaded with a ModelWarning (listed on the model), refused with
# strict=True.
DOUBTFUL = {
    "triangle inequality": (robot(link("a"), link("b", ixx=0.1, iyy=0.1, izz=0.5),
                                  joint("j", "a", "b")), ["link 'b'", "triangle inequality"]),
    "massless with inertia": (robot(link("a"), link("b", m=0.0), joint("j", "a", "b")),
                              ["link 'b'", "mass is 0 but the inertia is not"]),
}


@pytest.mark.parametrize("case", sorted(DOUBTFUL))
def test_doubtful_inertia_loads_with_a_warning_or_is_refused_when_strict(case):
    source, expected = DOUBTFUL[case]
    with pytest.warns(rd.ModelWarning) as caught:
        robot_model = rd.load_robot(source)
    assert len(caught) == 1 and len(robot_model.warnings) == 1
    for fragment in expected:
        assert fragment in str(caught[0].message) and fragment in robot_model.warnings[0]
    with pytest.raises(rd.URDFError) as info:
        rd.load_robot(source, strict=True)
    for fragment in expected:
        assert fragment in str(info.value)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_description_names_the_element(case):
    source, expected = CASES[case]
    with pytest.raises(rd.URDFError) as info:
        rd.load_robot(source)
    message = str(info.value)
    for fragment in expected:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    error = info.value  # no chained traceback from deep inside a parser
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


def test_mimic_of_a_joint_on_another_branch_is_refused():
    source = robot(link("a"), link("b"), link("c"), joint("j", "a", "b"),
                   joint("k", "a", "c", extra='<mimic joint="j" multiplier="2"/>'))
    with pytest.raises(rd.URDFError, match=r"joint 'k' \(revolute\): mimics 'j', which is not "
                                           "on the chain"):
        rd.load_robot(source, tip_link="c")
    with pytest.warns(rd.ModelWarning, match="joint 'k' mimics chain joint 'j' but is not on "
                                             "the chain: it stays locked at 0"):
        assert rd.load_robot(source, tip_link="b").joint_names == ("j",)


def test_ambiguous_tip_lists_the_candidates():
    source = robot(link("a"), link("b"), link("c"), link("d"), joint("j", "a", "b"),
                   joint("k", "b", "c"), joint("l", "b", "d", kind="fixed"))
    with pytest.raises(rd.URDFError, match=r"tip_link is ambiguous: 2 leaf links .*\['c', 'd'\]"):
        rd.load_robot(source)
    assert rd.load_robot(source, tip_link="d").joint_names == ("j",)


def test_tip_not_below_base_and_unknown_links():
    source = robot(*GOOD, link("c"), joint("k", "a", "c"))
    with pytest.raises(rd.URDFError, match="tip_link 'c' is not below base_link 'b'"):
        rd.load_robot(source, base_link="b", tip_link="c")
    with pytest.raises(rd.URDFError, match="base_link 'nope' is not a link"):
        rd.load_robot(source, base_link="nope")
    with pytest.raises(rd.URDFError, match="tip_link 'nope' is not a link"):
        rd.load_robot(source, tip_link="nope")


def test_no_movable_joint_between_base_and_tip():
    source = robot(*GOOD, link("c"), joint("k", "b", "c", kind="fixed"))
    with pytest.raises(rd.URDFError,
                       match="no movable joint between base_link 'b' and tip_link 'c'"):
        rd.load_robot(source, base_link="b", tip_link="c")


def test_missing_file_and_wrong_source_type(tmp_path):
    with pytest.raises(rd.URDFError, match="file not found"):
        rd.load_robot(tmp_path / "missing.urdf")
    with pytest.raises(rd.URDFError, match="URDF text or a file path, got int"):
        rd.load_robot(42)


def test_xacro_error_is_reported_with_the_file(tmp_path):
    path = tmp_path / "broken.urdf.xacro"
    path.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">'
                    '<link name="${undefined_length}"/></robot>')
    with pytest.raises(rd.URDFError, match=r"broken.urdf.xacro: xacro expansion failed: .*"
                                           r"undefined_length"):
        rd.load_robot(path)


def test_bad_gravity():
    with pytest.raises(rd.ArgumentError, match="gravity must be 3 finite numbers"):
        rd.load_robot(robot(*GOOD), gravity=(0, 0))
    with pytest.raises(rd.ArgumentError, match="gravity must be 3 finite numbers"):
        rd.load_robot(robot(*GOOD), gravity=(0, 0, float("nan")))


def test_solver_argument_errors():
    solver = rd.make_solver(rd.load_robot(robot(*GOOD)))
    with pytest.raises(rd.ArgumentError, match="wrong argument size for q: expected 1, got 2"):
        solver.gravity([0.0, 1.0])
    with pytest.raises(rd.ArgumentError, match="qd has non-finite values"):
        solver.bias([0.0], [float("nan")])
    with pytest.raises(rd.ArgumentError, match=r"wrong argument shape for q: expected \(N, 1\)"):
        solver.gravity_batch([0.0, 1.0])
    with pytest.raises(rd.ArgumentError, match="f_tip must be 6 finite numbers"):
        solver.inverse_dynamics([0.0], [0.0], [0.0], f_tip=[1.0, 2.0])
    with pytest.raises(ValueError, match="unknown frame"):
        solver.jacobian([0.0], frame="tool")
    with pytest.raises(rd.ArgumentError, match="unknown backend"):
        rd.make_solver(solver.model, backend="casadi")
