"""A closed mechanism simulated by MuJoCo: an independent plant for closed_chain/.

The tree is built body by body from the KinematicTree (so that a mechanism read from an SDF
model gets one too); each closure becomes MuJoCo equality constraints, which hold where the
model is built (q = 0, where the closures meet): a point closure a `connect`, a weld a
`weld`, a revolute closure two `connect`s on its axis. MuJoCo solves them as stiff soft
constraints (solref, solimp below): the loop stays closed to about 1e-7 m at the default
step, not to the Newton tolerance of closed_chain/.
"""

import numpy as np

import mujoco

from ..closed_chain.mimics import motor_names
from ..closed_chain.tree import BASE

SOLREF = (0.0, 1.0)                                # direct stiffness: set in __init__ from h
SOLIMP = (0.9999, 0.9999, 0.001, 0.5, 2.0)
AXIS_POINT = 0.1                                   # m: a revolute closure's second point
BOUND_MASS, BOUND_INERTIA = 1e-9, 1e-12            # MuJoCo needs mass > 0 on moving bodies


class MujocoClosedChain:
    """A ClosedChain's tree and closures in MuJoCo, stepped at h [s] (RK4)."""

    def __init__(self, chain, time_step=1e-4):
        tree = chain.tree
        spec = mujoco.MjSpec()
        spec.compiler.boundmass, spec.compiler.boundinertia = BOUND_MASS, BOUND_INERTIA
        spec.compiler.degree = False                     # angles (springref) in radians
        spec.option.timestep = time_step
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
        spec.option.gravity = np.asarray(tree.gravity, dtype=float)
        bodies, self.names = {BASE: spec.worldbody}, []
        for i in range(tree.dof):
            quat = np.zeros(4)
            mujoco.mju_mat2Quat(quat, np.ascontiguousarray(tree.origin_rotation[i]).ravel())
            name = f"body_{tree.joint_names[i]}"
            body = bodies[tree.parent[i]].add_body(name=name, pos=tree.origin_translation[i],
                                                   quat=quat)
            joint = body.add_joint(name=tree.joint_names[i], axis=tree.axis[i],
                                   type=(mujoco.mjtJoint.mjJNT_SLIDE if tree.is_prismatic[i]
                                         else mujoco.mjtJoint.mjJNT_HINGE))
            if chain.springs is not None:        # the joint's spring and damper, if any
                joint.stiffness = [chain.springs.stiffness[i], 0.0, 0.0]    # linear terms
                joint.springref = chain.springs.reference[i]
                joint.damping = [chain.springs.damping[i], 0.0, 0.0]
            I = tree.inertia[i]
            body.mass, body.ipos = max(tree.mass[i], BOUND_MASS), tree.com[i]
            body.fullinertia = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
            body.explicitinertial = True
            bodies[i] = body
            self.names.append(name)
        for c in chain.closures:
            body_a, R_a, p_a = tree.link_frame(c.link_a)
            body_b, _, _ = tree.link_frame(c.link_b)
            names = [("world" if b == BASE else self.names[b]) for b in (body_a, body_b)]
            if c.kind == "weld":
                offsets, kind = [np.zeros(3)], mujoco.mjtEq.mjEQ_WELD
            else:
                offsets = [np.zeros(3)] + ([np.array([0, 0, AXIS_POINT])]
                                           if c.kind == "revolute" else [])
                kind = mujoco.mjtEq.mjEQ_CONNECT
            for offset in offsets:
                anchor = R_a @ (c.p_a + c.R_a @ offset) + p_a      # in body a's frame
                equality = spec.add_equality(type=kind, objtype=mujoco.mjtObj.mjOBJ_BODY,
                                             name1=names[0], name2=names[1])
                equality.data[:3] = anchor
                equality.solref = [-1e8, -2e4]      # stiffness, damping (negative: direct)
                equality.solimp = SOLIMP
        _add_couplings(spec, chain)
        self.mj = spec.compile()
        self.data = mujoco.MjData(self.mj)
        joints = [self.mj.joint(name) for name in tree.joint_names]
        self.qpos = np.array([j.qposadr[0] for j in joints])
        self.dof = np.array([j.dofadr[0] for j in joints])
        self.actuated = self.dof[[tree.joint_index(name) for name in motor_names(chain)]]

    def set_state(self, q, qd):
        self.data.qpos[self.qpos] = q
        self.data.qvel[self.dof] = qd
        mujoco.mj_forward(self.mj, self.data)

    def holding_torque(self, q):
        """The motor torques (k,) that hold MuJoCo's mechanism at rest at q (what braked
        motors' torque sensors read): q̈ is affine in the applied torques, so k + 1 forward
        dynamics give the torques with the least q̈ (least squares over every joint). The
        loop's soft constraint leaves them about 0.3 % off a rigid loop's. The state is left
        at rest at q."""
        self.set_state(q, np.zeros_like(q))
        k = len(self.actuated)
        accelerations = []
        for tau in np.vstack((np.zeros(k), np.eye(k))):
            self.data.qfrc_applied[:] = 0.0
            self.data.qfrc_applied[self.actuated] = tau
            mujoco.mj_forward(self.mj, self.data)
            accelerations.append(self.data.qacc[self.dof].copy())
        free = accelerations[0]
        per_torque = np.array(accelerations[1:]).T - free[:, None]
        self.data.qfrc_applied[:] = 0.0
        mujoco.mj_forward(self.mj, self.data)
        return np.linalg.lstsq(per_torque, -free, rcond=None)[0]

    def run(self, duration, tau=None):
        """Advance `duration` [s] with the motors' torques tau held; (q, q̇) at the end."""
        self.data.qfrc_applied[:] = 0.0
        if tau is not None:
            self.data.qfrc_applied[self.actuated] = tau
        for _ in range(int(round(duration / self.mj.opt.timestep))):
            mujoco.mj_step(self.mj, self.data)
        return self.data.qpos[self.qpos].copy(), self.data.qvel[self.dof].copy()


def _add_couplings(spec, chain):
    """Each coupled motor of `chain` (a kept mimic: closed_chain/mimics.py) as a joint
    equality to the motor it follows, q_j = offset + G q_m, stiff as the loops' equalities."""
    coupling = chain.coupling
    if coupling is None:
        return
    for row, name in enumerate(chain.actuated_joints):
        if name in coupling.motors:
            continue
        column = int(np.flatnonzero(coupling.G[row])[0])
        equality = spec.add_equality(type=mujoco.mjtEq.mjEQ_JOINT,
                                     objtype=mujoco.mjtObj.mjOBJ_JOINT, name1=name,
                                     name2=coupling.motors[column])
        equality.data[:5] = [coupling.offset[row], coupling.G[row, column], 0.0, 0.0, 0.0]
        equality.solref = [-1e8, -2e4]
        equality.solimp = SOLIMP


class MujocoLinkagePlant:
    """MuJoCo's linkage as sim_arm's plant (simulated_arm.SimulatedArm): its state is the
    motors' (q, v) of `model` (closed_chain.motor_model.MotorModel); MuJoCo keeps the whole
    linkage's state, started at rest with the motors at q0 and the loops closed by the
    library (mechanism.close_from), then held closed by MuJoCo's equality constraints.
    h [s]: one advance; MuJoCo steps `substeps` times within it."""

    def __init__(self, model, q0, h=1e-3, substeps=5):
        from ..closed_chain.motor_space import MotorSpace
        self.model, self.h = model, float(h)
        self.sim = MujocoClosedChain(model.mechanism, time_step=self.h / substeps)
        tree = model.mechanism.tree          # the model's motors (coupled ones: its own)
        self.motors = [tree.joint_index(name) for name in model.joint_names]
        self.passive_joints = model.passive_joints
        self._passive = [model.mechanism.tree.joint_index(name) for name in self.passive_joints]
        q = MotorSpace(model.mechanism).pose(q0)
        self.sim.set_state(q, np.zeros_like(q))

    def passive_state(self):
        """(q, q̇) of the passive joints (passive_joints order), MuJoCo's."""
        sim = self.sim
        return sim.data.qpos[sim.qpos[self._passive]], sim.data.qvel[sim.dof[self._passive]]

    def positions(self):
        """q (n,) of every joint of the linkage [rad or m], MuJoCo's."""
        return self.sim.data.qpos[self.sim.qpos].copy()

    def advance(self, q, v, tau):
        """The motors' (q, v) after h under motor torques tau (MuJoCo's own state: q, v are
        the ones it returned last)."""
        q_all, v_all = self.sim.run(self.h, tau)
        return q_all[self.motors], v_all[self.motors]

    def holding_torque(self, q):
        """What braked motors' sensors read at the linkage's pose now (MuJoCo's, q: that
        pose's motors)."""
        return self.sim.holding_torque(self.positions())

    def external_joint_torque(self, q, link, force, torque):
        raise ValueError("an external wrench on a closed linkage is not simulated yet")
