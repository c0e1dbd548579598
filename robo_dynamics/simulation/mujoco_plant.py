"""An independent plant: the arm simulated by MuJoCo, from the same URDF. The only module
that imports mujoco besides mujoco_closed_chain.py (a closed mechanism).

MuJoCo reads the chain's URDF itself (joints outside the chain made fixed, as the library
locks them; links keep their own frames); nothing of the library's dynamics is used to
advance it. What the library's model may not have is added on request: joint damping and
Coulomb friction (the URDF's <dynamics>, or given; MuJoCo's dof_damping and frictionloss,
the latter an exact dry-friction constraint, not the library's smoothed law), rotor armature
per joint, the URDF's joint limits (always), and a box obstacle that the arm's links touch
through capsules drawn from each link's origin to the next (collision geometry only: the
links' mass and inertia stay the URDF's, except that MuJoCo needs every principal inertia
> 0: a point mass gets MIN_INERTIA). At start-up the plant's mass matrix and bias
forces at one state are compared with the library's (`check_against`), so a conversion
problem stops the simulator there instead of showing up as a control error.

Frames: MuJoCo's world is the URDF root; the library's base frame is base_link's. Gravity
(given in the base frame) and the obstacle (centre in base axes) are carried over.
"""

import numpy as np

import mujoco

from ..model.urdf_document import locked_elsewhere

INTEGRATORS = {"rk4": mujoco.mjtIntegrator.mjINT_RK4,
               "semi_implicit_euler": mujoco.mjtIntegrator.mjINT_EULER,
               "implicit_euler": mujoco.mjtIntegrator.mjINT_IMPLICIT}
LINK_RADIUS = 0.04      # m, the collision capsules around the links
CHECK_TOLERANCE = 1e-6  # relative difference from the library at start-up
MIN_INERTIA = 1e-12     # kg·m²: the smallest principal inertia MuJoCo is given


class MujocoPlant:
    """`model` (a RobotModel, payloads included) simulated by MuJoCo at a fixed step h [s].

    integrator: a key of INTEGRATORS (MuJoCo's own schemes of that kind). damping (n,)
    [N·m·s/rad], coulomb (n,) [N·m]: joint friction (None: none), e.g. the URDF's
    <dynamics damping friction>. armature (n,) [kg·m² or kg]: rotor inertia per
    joint, model order (None: none). obstacle_box: (x, y, z, length_x, length_y, length_z):
    centre in base_link's frame and edge lengths [m], base axes (None: none).
    Raises ValueError for what MuJoCo cannot take (mimic joints) or cannot load.
    """

    engine = "mujoco"

    def __init__(self, model, integrator="rk4", time_step=1e-3, damping=None, coulomb=None,
                 armature=None, obstacle_box=None, link_radius=LINK_RADIUS):
        if model.is_coupled:
            raise ValueError("engine mujoco: chains with mimic joints are not supported "
                             f"({list(model.mimic_joints)}); use engine internal")
        if integrator not in INTEGRATORS:
            raise ValueError(f"unknown integrator {integrator!r}; expected one of "
                             f"{sorted(INTEGRATORS)}")
        if not time_step > 0.0:
            raise ValueError(f"time step must be > 0, got {time_step}")
        n = model.dof
        armature = np.zeros(n) if armature is None else np.asarray(armature, dtype=float)
        if armature.shape != (n,) or not np.all(armature >= 0.0):
            raise ValueError(f"armature needs {n} values >= 0")
        self.model, self.h = model, float(time_step)
        self.armature = armature
        spec = mujoco.MjSpec.from_string(locked_elsewhere(model.urdf_xml,
                                                          set(model.joint_names)))
        spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
        spec.compiler.fusestatic = False          # every link keeps its own body and frame
        spec.compiler.boundinertia = MIN_INERTIA   # MuJoCo needs inertia > 0 (point masses)
        for payload in model.payloads:            # in the body's frame, about its centre
            I = payload.inertia
            spec.body(model.body_links[payload.body]).add_body(
                name=f"payload_{payload.link}", pos=[0.0, 0.0, 0.0], mass=payload.mass,
                ipos=payload.com, fullinertia=[I[0, 0], I[1, 1], I[2, 2], I[0, 1],
                                               I[0, 2], I[1, 2]], explicitinertial=True)
        self._add_link_capsules(spec, model, link_radius)
        try:
            self.mj = spec.compile()
        except Exception as exc:   # MuJoCo's compiler errors name the element
            raise ValueError(f"MuJoCo cannot load the robot description: {exc}") from None
        self.mj.opt.timestep = self.h
        self.mj.opt.integrator = INTEGRATORS[integrator]
        self.data = mujoco.MjData(self.mj)
        joints = [self.mj.joint(name) for name in model.joint_names]
        self.qpos = np.array([j.qposadr[0] for j in joints])
        self.dof = np.array([j.dofadr[0] for j in joints])
        mujoco.mj_forward(self.mj, self.data)
        base = self.mj.body(model.base_link)
        R_world_base = self.data.xmat[base.id].reshape(3, 3).copy()
        p_world_base = self.data.xpos[base.id].copy()
        self.mj.opt.gravity[:] = R_world_base @ model.gravity
        if obstacle_box is not None:
            self._add_obstacle(spec, obstacle_box, R_world_base, p_world_base)
        # per joint, model order: rotor inertia and the URDF's joint friction
        self.mj.dof_armature[self.dof] = armature
        self.mj.dof_damping[self.dof] = 0.0 if damping is None else damping
        self.mj.dof_frictionloss[self.dof] = 0.0 if coulomb is None else coulomb

    @staticmethod
    def _add_link_capsules(spec, model, radius):
        """Collision capsules from each body's origin to the next joint's (the tip for the
        last); they collide with the obstacle only, never with each other."""
        ends = list(model.origin_translation[1:]) + [model.tip_translation]
        for link, end in zip(model.body_links, ends):
            end = np.asarray(end, dtype=float)
            geom = spec.body(link).add_geom(contype=1, conaffinity=0)
            if np.linalg.norm(end) > 1e-6:
                geom.type = mujoco.mjtGeom.mjGEOM_CAPSULE
                geom.fromto = [0.0, 0.0, 0.0, *end]
                geom.size = [radius, 0.0, 0.0]
            else:
                geom.type = mujoco.mjtGeom.mjGEOM_SPHERE
                geom.size = [radius, 0.0, 0.0]

    def _add_obstacle(self, spec, box, R_world_base, p_world_base):
        box = np.asarray(box, dtype=float)
        if box.shape != (6,) or not np.all(np.isfinite(box)) or not np.all(box[3:] > 0.0):
            raise ValueError("obstacle_box needs 6 finite numbers: centre x, y, z and edge "
                             "lengths > 0 [m]")
        quaternion = np.zeros(4)
        mujoco.mju_mat2Quat(quaternion, R_world_base.ravel())
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, name="obstacle",
                                pos=p_world_base + R_world_base @ box[:3], quat=quaternion,
                                size=0.5 * box[3:], contype=0, conaffinity=1)
        gravity, integrator = self.mj.opt.gravity.copy(), self.mj.opt.integrator
        self.mj = spec.compile()
        self.mj.opt.timestep, self.mj.opt.integrator = self.h, integrator
        self.mj.opt.gravity[:] = gravity
        self.data = mujoco.MjData(self.mj)

    def _set(self, q, v):
        self.data.qpos[self.qpos] = q
        self.data.qvel[self.dof] = v

    def advance(self, q, v, tau):
        """(q, q̇) one step h later under the motor torques tau held over the step."""
        self._set(q, v)
        self.data.qfrc_applied[:] = 0.0
        self.data.qfrc_applied[self.dof] = tau
        mujoco.mj_step(self.mj, self.data)
        return self.data.qpos[self.qpos].copy(), self.data.qvel[self.dof].copy()

    def external_joint_torque(self, q, link, force, torque):
        """Jᵀ W (n,): the joint torques of the wrench W = (force [N], torque [N·m]) applied
        to `link` (any link MuJoCo has) at its origin, in its axes (MuJoCo's mj_applyFT)."""
        try:
            body = self.mj.body(link).id
        except KeyError:
            raise ValueError(f"link '{link}' is not in the simulated model") from None
        self._set(q, np.zeros(len(q)))
        mujoco.mj_kinematics(self.mj, self.data)
        mujoco.mj_comPos(self.mj, self.data)
        R = self.data.xmat[body].reshape(3, 3)
        generalized = np.zeros(self.mj.nv)
        mujoco.mj_applyFT(self.mj, self.data, R @ np.asarray(force, dtype=float),
                          R @ np.asarray(torque, dtype=float), self.data.xpos[body].copy(),
                          body, generalized)
        return generalized[self.dof]

    def tip_frame(self, q):
        """(R, p): the tip link's rotation and origin [m] in base_link's frame, MuJoCo's."""
        self._set(q, np.zeros(len(q)))
        mujoco.mj_kinematics(self.mj, self.data)
        base, tip = self.mj.body(self.model.base_link).id, self.mj.body(self.model.tip_link).id
        R_b = self.data.xmat[base].reshape(3, 3)
        return (R_b.T @ self.data.xmat[tip].reshape(3, 3),
                R_b.T @ (self.data.xpos[tip] - self.data.xpos[base]))

    def holding_torque(self, q):
        """The joint torques that hold the arm still at q: MuJoCo's bias forces at rest."""
        self._set(q, np.zeros(len(q)))
        mujoco.mj_forward(self.mj, self.data)
        return self.data.qfrc_bias[self.dof].copy()

    def contact_force(self):
        """Total force [N] of the contacts of the last step (0 without contact), world
        axes: what the obstacle pushes the arm with."""
        total = np.zeros(3)
        wrench = np.zeros(6)
        for i in range(self.data.ncon):
            mujoco.mj_contactForce(self.mj, self.data, i, wrench)
            frame = self.data.contact[i].frame.reshape(3, 3)
            total += frame.T @ wrench[:3]
        return total

    def mass_matrix_and_bias(self, q, v):
        """MuJoCo's M(q) without the armature (n, n) and bias forces C q̇ + g (n,), model
        order: what the library computes for the same model."""
        self._set(q, v)
        mujoco.mj_forward(self.mj, self.data)
        M = np.zeros((self.mj.nv, self.mj.nv))
        mujoco.mj_fullM(self.mj, self.data, M)
        M = M[np.ix_(self.dof, self.dof)] - np.diag(self.armature)
        return M, self.data.qfrc_bias[self.dof].copy()

    def check_against(self, solver, q, v):
        """Raise ValueError unless MuJoCo's M and bias at (q, q̇) equal `solver`'s (the
        library, same model) to CHECK_TOLERANCE relative: a conversion problem is caught
        at start-up."""
        M, b = self.mass_matrix_and_bias(q, v)
        for what, ours, reference in (("mass matrix", M, solver.mass_matrix(q)),
                                      ("bias forces", b, solver.bias(q, v))):
            error = np.max(np.abs(ours - reference)) / max(np.max(np.abs(reference)), 1e-9)
            if not error <= CHECK_TOLERANCE:
                raise ValueError(
                    f"MuJoCo's model of {self.model.name} differs from the library's: "
                    f"{what} relative difference {error:.3g} > {CHECK_TOLERANCE:g} at "
                    f"q = {np.round(q, 4).tolist()} (MuJoCo {np.round(ours, 6).tolist()}, "
                    f"library {np.round(reference, 6).tolist()})")
