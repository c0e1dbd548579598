"""Closed mechanisms for the tests, built from their dimensions, with the closed forms the
tests compare against (computed here from textbook geometry, not by robo_dynamics).

planar_four_bar: a crank–rocker in the x–z plane (gravity −z), every joint about −y so that
a positive angle turns x towards z. Ground pivots O2 = (0, 0, 0) and O4 = (d, 0, 0); crank
a, coupler b, follower c (Grashof: the crank turns fully). The loop is cut where the coupler
meets the follower: a point closure. At q = 0 the crank stands at THETA2_0 and the model is
closed (open branch).
"""

import math

import numpy as np

A, B, C, D = 0.20, 0.50, 0.40, 0.45          # m: crank, coupler, follower, ground
MASSES = (1.0, 2.0, 1.5)                      # kg: crank, coupler, follower
COUPLER_COM = (0.25, 0.04)                    # m: (along, across) the coupler, its frame
THETA2_0 = math.radians(60.0)


def four_bar_angles(theta2):
    """(θ3, θ4) [rad] of the open branch for crank angle θ2: the follower's tip is where the
    circle of radius c about O4 meets the circle of radius b about the crank's tip."""
    ax, az = A * math.cos(theta2), A * math.sin(theta2)
    dx, dz = D - ax, -az                      # crank tip → O4
    e = math.hypot(dx, dz)
    # the tip B sits at distance b from the crank tip and c from O4
    along = (B * B - C * C + e * e) / (2 * e)
    across = math.sqrt(B * B - along * along)
    bx = ax + along * dx / e - across * dz / e
    bz = az + along * dz / e + across * dx / e
    return math.atan2(bz - az, bx - ax), math.atan2(bz, bx - D)


def four_bar_ratios(theta2, theta3, theta4):
    """(ω3/ω2, ω4/ω2) from the loop's velocity equation (Norton, Design of Machinery, §6.7)."""
    return (A * math.sin(theta4 - theta2) / (B * math.sin(theta3 - theta4)),
            A * math.sin(theta2 - theta3) / (C * math.sin(theta4 - theta3)))


def four_bar_holding_torque(theta2, g=9.81):
    """Crank torque [N·m] that holds the four-bar still against gravity: virtual work,
    τ = Σ m_i g ∂z_i/∂θ2 over the three centres of mass."""
    theta3, theta4 = four_bar_angles(theta2)
    r3, r4 = four_bar_ratios(theta2, theta3, theta4)
    m2, m3, m4 = MASSES
    along, across = COUPLER_COM
    dz2 = A / 2 * math.cos(theta2)
    dz3 = A * math.cos(theta2) + (along * math.cos(theta3) - across * math.sin(theta3)) * r3
    dz4 = C / 2 * math.cos(theta4) * r4
    return g * (m2 * dz2 + m3 * dz3 + m4 * dz4)


def _inertial(mass, x, z, length):
    i = mass * length ** 2 / 12.0
    return (f'<inertial><origin xyz="{x} 0 {z}"/><mass value="{mass}"/>'
            f'<inertia ixx="{i / 10}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{i}"/></inertial>')


def _joint(name, parent, child, xyz, pitch):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" '
            f'rpy="0 {-pitch} 0"/><axis xyz="0 -1 0"/>'
            '<limit lower="-6.3" upper="6.3" effort="100" velocity="10"/></joint>')


def planar_four_bar_urdf(pendulum=False):
    """The four-bar's URDF; pendulum: with a free pendulum beside it on the ground (a
    second degree of freedom outside the loop)."""
    theta3, theta4 = four_bar_angles(THETA2_0)
    m2, m3, m4 = MASSES
    extra = ('<link name="pendulum">' + _inertial(1.0, 0.1, 0, 0.2) + '</link>'
             + _joint("pendulum_joint", "ground", "pendulum", (-0.3, 0, 0), 0.0)
             if pendulum else "")
    return "".join([
        '<robot name="planar_four_bar"><link name="ground"/>', extra,
        f'<link name="crank">{_inertial(m2, A / 2, 0, A)}</link>',
        f'<link name="coupler">{_inertial(m3, *COUPLER_COM, B)}</link>',
        f'<link name="follower">{_inertial(m4, C / 2, 0, C)}</link>',
        _joint("crank_joint", "ground", "crank", (0, 0, 0), THETA2_0),
        _joint("coupler_joint", "crank", "coupler", (A, 0, 0), theta3 - THETA2_0),
        _joint("follower_joint", "ground", "follower", (D, 0, 0), theta4),
        '</robot>'])


FOUR_BAR_PARAMETERS = {
    "actuated_joints": ["crank_joint"],
    "loop_closures": {"names": ["coupler_follower"],
                      "coupler_follower": {"type": "point", "link_a": "coupler",
                                           "xyz_a": [B, 0.0, 0.0], "link_b": "follower",
                                           "xyz_b": [C, 0.0, 0.0]}}}


def random_spatial_tree_urdf(seed=0, joints=3):
    """Two branches of `joints` revolute joints each from one base, random axes, offsets
    and inertias (links a0.., b0..): a tree to check Φ_q and γ of every closure kind against
    finite differences (the branches' ends need not meet)."""
    rng = np.random.default_rng(seed)
    parts = ['<robot name="spatial_tree"><link name="base"/>']
    for branch in ("a", "b"):
        parent = "base"
        for k in range(joints):
            link = f"{branch}{k}"
            m = rng.uniform(0.5, 2.0)
            d = rng.uniform(0.01, 0.05, 3)
            parts.append(f'<link name="{link}"><inertial><origin xyz="{" ".join(map(str, rng.uniform(-0.1, 0.1, 3)))}"/>'
                         f'<mass value="{m}"/><inertia ixx="{d[0] + d[1]}" ixy="0" ixz="0" '
                         f'iyy="{d[1] + d[2]}" iyz="0" izz="{d[0] + d[2]}"/></inertial></link>')
            axis = rng.normal(size=3)
            parts.append(f'<joint name="{link}_joint" type="revolute"><parent link="{parent}"/>'
                         f'<child link="{link}"/><origin xyz="{" ".join(map(str, rng.uniform(-0.3, 0.3, 3)))}" '
                         f'rpy="{" ".join(map(str, rng.uniform(-1, 1, 3)))}"/>'
                         f'<axis xyz="{" ".join(map(str, axis / np.linalg.norm(axis)))}"/>'
                         '<limit lower="-3" upper="3" effort="10" velocity="5"/></joint>')
            parent = link
    parts.append("</robot>")
    return "".join(parts)


def _sdf_inertial(mass, x, z, length):
    i = mass * length ** 2 / 12.0
    return (f"<inertial><pose>{x} 0 {z} 0 0 0</pose><mass>{mass}</mass><inertia>"
            f"<ixx>{i / 10}</ixx><ixy>0</ixy><ixz>0</ixz><iyy>{i}</iyy><iyz>0</iyz>"
            f"<izz>{i}</izz></inertia></inertial>")


def planar_four_bar_sdf(follower_from_ground=True):
    """The same four-bar as an SDF model (SDFormat 1.9), drawn closed, the loop's fourth
    joint a ball joint. Its poses use the model frame, `relative_to` and degrees; one axis is
    expressed in the model frame. follower_from_ground False: the follower's joint is
    written from the follower to the ground (the tree then meets it from its child)."""
    theta3, theta4 = four_bar_angles(THETA2_0)
    m2, m3, m4 = MASSES
    ax, az = A * math.cos(THETA2_0), A * math.sin(THETA2_0)
    follower_joint = (
        '<joint name="follower_joint" type="revolute"><parent>ground</parent>'
        '<child>follower</child>' if follower_from_ground else
        '<joint name="follower_joint" type="revolute"><parent>follower</parent>'
        '<child>ground</child><pose relative_to="follower"/>')
    axis = '<axis><xyz>0 -1 0</xyz><limit><lower>-6.3</lower><upper>6.3</upper></limit></axis>'
    if not follower_from_ground:        # the ground turns about +y relative to the follower
        axis = axis.replace("0 -1 0", "0 1 0")
    return "".join([
        '<sdf version="1.9"><model name="planar_four_bar">',
        '<joint name="anchor" type="fixed"><parent>world</parent><child>ground</child></joint>',
        '<link name="ground"/>',
        f'<link name="crank"><pose>0 0 0 0 {-THETA2_0} 0</pose>{_sdf_inertial(m2, A / 2, 0, A)}</link>',
        f'<link name="coupler"><pose degrees="true">{ax} 0 {az} 0 {-math.degrees(theta3)} 0</pose>'
        f'{_sdf_inertial(m3, *COUPLER_COM, B)}</link>',
        f'<link name="follower"><pose>{D} 0 0 0 {-theta4} 0</pose>{_sdf_inertial(m4, C / 2, 0, C)}</link>',
        '<joint name="crank_joint" type="revolute"><parent>ground</parent><child>crank</child>'
        '<axis><xyz expressed_in="__model__">0 -1 0</xyz></axis></joint>',
        '<joint name="coupler_joint" type="revolute"><parent>crank</parent><child>coupler</child>'
        f'{axis}</joint>',
        follower_joint, axis, '</joint>',
        '<joint name="coupler_follower" type="ball"><parent>coupler</parent><child>follower</child>'
        f'<pose relative_to="follower">{C} 0 0 0 0 0</pose></joint>',
        '</model></sdf>'])


def planar_four_bar_gazebo_urdf():
    """The four-bar's URDF carrying its cut joint as SDF in a <gazebo> element (the ROS
    workaround) and the crank's motor as a <transmission>."""
    return planar_four_bar_urdf().replace("</robot>", "".join([
        '<gazebo><joint name="coupler_follower" type="ball"><parent>coupler</parent>'
        f'<child>follower</child><pose>{C} 0 0 0 0 0</pose></joint></gazebo>',
        '<gazebo reference="crank"><material>Gazebo/Red</material></gazebo>',
        '<transmission name="crank_drive"><type>transmission_interface/SimpleTransmission'
        '</type><joint name="crank_joint"><hardwareInterface>EffortJointInterface'
        '</hardwareInterface></joint></transmission></robot>']))


# The spatial four-bar of Lee, Sohn, Kim and Yoo (§5.2, Appendix A): a crank on a revolute
# joint to the ground, the coupler on a two-angle (universal) joint to the crank, a
# follower on a revolute joint to the ground, the loop cut at the coupler–follower
# spherical joint; q = (θ2, θ31, θ32, θ4). The paper's figure gives no dimensions; these
# are chosen (a 10 cm crank about x, a 20 cm follower about y, a 40 cm coupler), the masses
# those of aluminium bars of that size, roughly.
SPATIAL_CRANK, SPATIAL_FOLLOWER = 0.10, 0.20                 # m
SPATIAL_O4 = np.array([0.30, 0.25, 0.0])                     # m, the follower's pivot
SPATIAL_COUPLER = SPATIAL_O4 + [0.0, 0.0, SPATIAL_FOLLOWER] - [0.0, 0.0, SPATIAL_CRANK]


def _rod(name, mass, com, length):
    i = mass * length ** 2 / 12.0
    return (f'<link name="{name}"><inertial><origin xyz="{com[0]} {com[1]} {com[2]}"/>'
            f'<mass value="{mass}"/><inertia ixx="{i + 1e-4}" ixy="0" ixz="0" iyy="{i + 2e-4}" '
            f'iyz="0" izz="{i + 3e-4}"/></inertial></link>')


def spatial_four_bar_urdf():
    d = SPATIAL_COUPLER
    u2 = np.cross([1.0, 0.0, 0.0], d)
    u2 /= np.linalg.norm(u2)
    joint = ('<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/>'
             '<origin xyz="{3} {4} {5}"/><axis xyz="{6} {7} {8}"/>'
             '<limit lower="-6.3" upper="6.3" effort="100" velocity="20"/></joint>')
    return "".join([
        '<robot name="spatial_four_bar"><link name="ground"/>',
        _rod("crank", 0.5, (0, 0, SPATIAL_CRANK / 2), SPATIAL_CRANK),
        _rod("coupler_cross", 0.01, (0, 0, 0), 0.01),
        _rod("coupler", 1.0, d / 2, float(np.linalg.norm(d))),
        _rod("follower", 0.8, (0, 0, SPATIAL_FOLLOWER / 2), SPATIAL_FOLLOWER),
        joint.format("crank_joint", "ground", "crank", 0, 0, 0, 1, 0, 0),
        joint.format("coupler_joint_1", "crank", "coupler_cross", 0, 0, SPATIAL_CRANK, 1, 0, 0),
        joint.format("coupler_joint_2", "coupler_cross", "coupler", 0, 0, 0, *u2),
        joint.format("follower_joint", "ground", "follower", *SPATIAL_O4, 0, 1, 0),
        '</robot>'])


SPATIAL_FOUR_BAR_PARAMETERS = {
    "loop_closures": {"names": ["spherical"],
                      "spherical": {"type": "point", "link_a": "coupler",
                                    "xyz_a": SPATIAL_COUPLER.tolist(), "link_b": "follower",
                                    "xyz_b": [0.0, 0.0, SPATIAL_FOLLOWER]}}}


def parallelogram_arm_urdf(rear=0.25):
    """A palletizer's arm in the x–z plane (joints about −y): the upper arm (motor
    shoulder_joint) and the rear link (motor rear_joint) turn about the same shoulder axis;
    the forearm hangs from the upper arm (passive elbow_joint) and reaches 0.25 m behind the
    elbow; a rod on the rear link's end (passive rod_joint) meets that point: the loop is cut
    there (PARALLELOGRAM_PARAMETERS). rear = 0.25 m: a parallelogram (the forearm keeps the
    rear link's angle); another length: a general four-bar. Drawn with the upper arm at 60°
    and the forearm at −10°; a 10 kg load at the forearm's end."""
    upper, fore, back = 0.8, 1.0, 0.25
    shoulder = np.array([0.0, 0.0, 0.5])
    u = np.radians(60.0)
    f = np.radians(-10.0)
    d_u, d_f = np.array([np.cos(u), 0, np.sin(u)]), np.array([np.cos(f), 0, np.sin(f)])
    elbow = shoulder + upper * d_u
    behind = elbow - back * d_f                    # the forearm's rear point
    rear_end = shoulder - rear * d_f
    rod = behind - rear_end
    rod_angle, rod_length = np.arctan2(rod[2], rod[0]), float(np.linalg.norm(rod))
    rear_angle = np.arctan2(-d_f[2], -d_f[0])
    joint = ('<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/>'
             '<origin xyz="{3} 0 {4}" rpy="0 {5} 0"/><axis xyz="0 -1 0"/>'
             '<limit lower="-6.3" upper="6.3" effort="2000" velocity="3"/></joint>')
    return "".join([
        '<robot name="parallelogram_arm"><link name="base_link"/>',
        _rod_planar("upper_arm", 25.0, upper), _rod_planar("rear_link", 8.0, rear),
        _rod_planar("rod", 6.0, rod_length),
        f'<link name="forearm"><inertial><origin xyz="{(fore - back) / 2 + 0.1} 0 0"/>'
        '<mass value="28.0"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="3.2" iyz="0" izz="3.2"/>'
        '</inertial></link>',
        joint.format("shoulder_joint", "base_link", "upper_arm", *shoulder[[0, 2]], -u),
        joint.format("elbow_joint", "upper_arm", "forearm", upper, 0, -(f - u)),
        joint.format("rear_joint", "base_link", "rear_link", *shoulder[[0, 2]], -rear_angle),
        joint.format("rod_joint", "rear_link", "rod", rear, 0, -(rod_angle - rear_angle)),
        '</robot>']), rod_length


def _rod_planar(name, mass, length):
    i = mass * length ** 2 / 12.0
    return (f'<link name="{name}"><inertial><origin xyz="{length / 2} 0 0"/>'
            f'<mass value="{mass}"/><inertia ixx="{i / 20}" ixy="0" ixz="0" iyy="{i}" iyz="0" '
            f'izz="{i}"/></inertial></link>')


def parallelogram_parameters(rod_length):
    return {"actuated_joints": ["shoulder_joint", "rear_joint"],
            "loop_closures": {"names": ["rod_end"],
                              "rod_end": {"type": "point", "link_a": "rod",
                                          "xyz_a": [rod_length, 0.0, 0.0], "link_b": "forearm",
                                          "xyz_b": [-0.25, 0.0, 0.0]}}}


def parallelogram_holding_torque(shoulder, rear, g=9.81):
    """(τ_shoulder, τ_rear) [N·m] holding the parallelogram arm (rear = 0.25) at motor
    angles (shoulder, rear) from where it is drawn: virtual work, τ = ∂V/∂θ with the links'
    absolute angles: the upper arm and the rod at 60° + shoulder, the forearm at −10° + rear
    and the rear link at 170° + rear (the parallelogram keeps them so)."""
    up, fo, re = np.radians(60.0) + shoulder, np.radians(-10.0) + rear, np.radians(170.0) + rear
    tau_shoulder = g * (25.0 * 0.4 + 28.0 * 0.8 + 6.0 * 0.4) * np.cos(up)
    tau_rear = g * (28.0 * 0.475 * np.cos(fo) + 8.0 * 0.125 * np.cos(re) + 6.0 * 0.25 * np.cos(re))
    return np.array([tau_shoulder, tau_rear])


# A Delta picker (Clavel's), its three forearms modelled as single rods: in a Delta each
# forearm is a parallelogram whose two rods keep the rod's direction and move like a rod
# between the elbow and the platform (their offsets lie along the motor axis, about which the
# upper arm turns, and the platform only translates), so motor torques are the same; what
# the parallelograms do to the platform — keep it level — is done here by a massless
# Cartesian guide (three prismatic joints). Gravity −z; the arms hang below the base.
DELTA_BASE, DELTA_PLATFORM = 0.20, 0.05      # m: motor axes' and rod ends' radius
DELTA_UPPER, DELTA_FORE = 0.30, 0.70         # m: upper arm, forearm
DELTA_HEIGHT = 0.65                          # m: the platform below the base, as drawn
DELTA_MASSES = (1.2, 0.25, 0.6)              # kg: upper arm, rod, platform (with its load)
# (the Delta itself is shipped: urdf/rd_delta.urdf, config/rd_delta.yaml; these are the
# drawing its closed-form checks in test_closed_chain_delta.py start from)


def delta_geometry():
    """Per arm i (at 0°, 120°, 240° about z): (motor point, motor axis, elbow, rod end) [m]
    with the platform drawn DELTA_HEIGHT below the base: each upper arm's angle solved so
    that its elbow is DELTA_FORE from its rod end (the elbow outward)."""
    arms = []
    for phi in np.radians([0.0, 120.0, 240.0]):
        e = np.array([math.cos(phi), math.sin(phi), 0.0])
        t = np.array([-math.sin(phi), math.cos(phi), 0.0])
        motor = DELTA_BASE * e
        end = np.array([0.0, 0.0, -DELTA_HEIGHT]) + DELTA_PLATFORM * e
        elbow_at = lambda a: motor + DELTA_UPPER * (math.cos(a) * e - math.sin(a) * np.array([0, 0, 1.0]))  # noqa: E731
        gap = lambda a: np.linalg.norm(elbow_at(a) - end) - DELTA_FORE                     # noqa: E731
        low, high = -0.5, 1.2                   # gap(low) > 0 > gap(high) for these sizes
        for _ in range(100):                     # bisection
            mid = 0.5 * (low + high)
            low, high = (mid, high) if gap(mid) > 0 else (low, mid)
        arms.append((motor, t, elbow_at(low), end))
    return arms


def shipped_linkage(name):
    """The shipped linkage `name` (urdf/<name>.urdf with config/<name>.yaml's motors and
    loop closures), as the library loads it."""
    import pathlib
    import yaml
    from robo_dynamics.closed_chain import load_closed_chain
    repo = pathlib.Path(__file__).resolve().parents[2]
    section = yaml.safe_load((repo / "config" / f"{name}.yaml").read_text())
    return load_closed_chain(repo / "urdf" / f"{name}.urdf",
                             section["/**/dynamics_node"]["ros__parameters"])


# the Delta's forward kinematics and potential energy from its drawing alone (nothing of
# robo_dynamics): what test_closed_chain_delta.py, the motor space's and the node's tests
# hold its torques to
DELTA_G = 9.81         # m/s²


def elbows(motors):
    """Each arm's elbow [m] with its upper arm turned by motors[i] from the drawn pose (a
    positive angle lowers the elbow, as the motor joint turns about the tangent)."""
    out = []
    for (motor, _, elbow, _), angle in zip(delta_geometry(), motors):
        radial, down = np.hypot(*(elbow - motor)[:2]), (elbow - motor)[2]
        e = np.append((elbow - motor)[:2] / radial, 0.0)
        a = np.arctan2(-down, radial) + angle
        out.append(motor + DELTA_UPPER * (np.cos(a) * e - np.sin(a) * np.array([0, 0, 1.0])))
    return out


def platform(motors):
    """The platform's centre [m]: the lower point DELTA_FORE from every elbow moved in by
    the platform's radius (trilateration; the Delta's forward kinematics)."""
    centres = [E - DELTA_PLATFORM * np.append((E[:2]) / np.hypot(*E[:2]), 0.0)
               for E in elbows(motors)]
    c1, c2, c3 = centres
    A = 2.0 * np.array([c2 - c1, c3 - c1])
    b = np.array([c2 @ c2 - c1 @ c1, c3 @ c3 - c1 @ c1])
    p0 = np.linalg.lstsq(A, b, rcond=None)[0]            # a point of the line, n its direction
    n = np.cross(c2 - c1, c3 - c1)
    n /= np.linalg.norm(n)
    d = p0 - c1
    s = np.roots([1.0, 2.0 * n @ d, d @ d - DELTA_FORE ** 2])
    return min((p0 + s_k.real * n for s_k in s), key=lambda p: p[2])


def potential(motors):
    """V [J]: the upper arms and rods (centres of mass at their middles) and the platform."""
    m_upper, m_rod, m_platform = DELTA_MASSES
    p = platform(motors)
    V = m_platform * DELTA_G * p[2]
    for (motor, _, _, _), E in zip(delta_geometry(), elbows(motors)):
        end = p + DELTA_PLATFORM * np.append(E[:2] / np.hypot(*E[:2]), 0.0)
        V += m_upper * DELTA_G * (motor + E)[2] / 2.0 + m_rod * DELTA_G * (E + end)[2] / 2.0
    return V
