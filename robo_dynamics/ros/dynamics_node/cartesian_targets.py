"""dynamics_node's Cartesian targets (control/cartesian.py), each by its own topic:

    ~/target_pose       geometry_msgs/PoseStamped: hold the tip (tip_link's origin) at this
                        pose by the law of parameter cartesian.law; frame_id base_link (or
                        empty), tip_link or a link of the chain (then relative to that
                        link's pose now)
    ~/target_wrench     geometry_msgs/WrenchStamped: a wrench [N, N·m] the tip applies to
                        its surroundings (F_ff), in the axes of a frame as above, at the tip
    ~/target_stiffness  std_msgs/Float64MultiArray: K, 6 values (its diagonal) or 36 (row
                        major), [x, y, z, rx, ry, rz] in base axes
    ~/target_joint      sensor_msgs/JointState: the nullspace posture by joint name (no
                        positions: none)

The latest of each is kept; a message of any kind builds a new target from all of them
(while the tip is held, or for a pose) that the controller admits or refuses: a refusal is
an event with its reason, and changes nothing. Reports the admission only when the mode
changes (a stream of poses is not a stream of events)."""

import numpy as np
from geometry_msgs.msg import PoseStamped, WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ...algorithms.kinematics import forward_kinematics
from ...control.cartesian import LAWS, CartesianTarget
from ...control.joint_order import order_of
from .. import conversions


class CartesianTargets:
    """The four target subscriptions (made by `create_subscription`, the node's) over `live`
    (live.py); parameter(name) reads a node parameter (cartesian.*)."""

    def __init__(self, live, create_subscription, parameter):
        self.live, self.parameter = live, parameter
        # the latest of each: pose (R_d, p_d) in the base frame (None: none yet), wrench
        # (6,), stiffness (6, 6) (None: the parameter's), posture (n,) (None: no pull)
        self.latest = {"pose": None, "wrench": np.zeros(6), "stiffness": None,
                       "posture": None}
        create_subscription(PoseStamped, "~/target_pose", self.on_pose, 10)
        create_subscription(WrenchStamped, "~/target_wrench", self.on_wrench, 10)
        create_subscription(Float64MultiArray, "~/target_stiffness", self.on_stiffness,
                                 10)
        create_subscription(JointState, "~/target_joint", self.on_joint, 10)

    def on_pose(self, msg):
        def take():
            p = msg.pose.position
            R, p = self._in_base(msg.header.frame_id, conversions.matrix_from_quaternion(
                msg.pose.orientation), conversions.vector([p.x, p.y, p.z], 3, "position"),
                "target_pose")
            return {"pose": (R, p)}
        self._update("target pose", take, always=True)

    def on_wrench(self, msg):
        def take():
            f, t = msg.wrench.force, msg.wrench.torque
            force = conversions.vector([f.x, f.y, f.z], 3, "force")
            torque = conversions.vector([t.x, t.y, t.z], 3, "torque")
            R, _ = self._in_base(msg.header.frame_id, np.eye(3), np.zeros(3), "target_wrench")
            return {"wrench": np.concatenate((R @ force, R @ torque))}
        self._update("target wrench", take)

    def on_stiffness(self, msg):
        def take():
            values = np.asarray(msg.data, dtype=float)
            if values.size not in (6, 36):
                raise ValueError(f"6 or 36 values, got {values.size}")
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                raise ValueError(f"value {bad[0]} is {values[bad[0]]}: every value must be "
                                 "finite")
            K = np.diag(values) if values.size == 6 else values.reshape(6, 6)
            top = np.asarray(self.parameter("cartesian.max_stiffness"))
            law = self.parameter("cartesian.law")
            units = "1/s^2" if law == "operational_space" else "N/m, N·m/rad"
            if np.any(np.diag(K) > top):
                raise ValueError(f"diagonal {np.diag(K).tolist()} [{units}] beyond "
                                 f"cartesian.max_stiffness {top.tolist()} (the same units: "
                                 f"cartesian.law {law})")
            return {"stiffness": K}
        self._update("target stiffness", take)

    def on_joint(self, msg):
        def take():
            names = self.live.model.joint_names
            if not len(msg.position):
                return {"posture": None}
            index = order_of(list(msg.name), names, "target_joint name")
            return {"posture": conversions.vector(msg.position, len(names),
                                                  "target_joint position")[index]}
        self._update("target joint posture", take)

    # -- a target from the latest of each ---------------------------------------------------
    def _update(self, what, take, always=False):
        """Under the node's lock: `take` the message ({what it changes}; ValueError: refused
        with its reason), then, for a pose or while the tip is held, admit a new target; the
        change is kept only if that target is admitted (or none is due)."""
        live = self.live
        with live.lock:
            controller = live.controller
            if controller is None:
                return
            try:
                latest = {**self.latest, **take()}
                if not (always or controller.mode in LAWS) or latest["pose"] is None:
                    self.latest = latest
                    return
                target = self._target(latest)
            except ValueError as exc:
                live.report(controller.refuse(f"{what} refused: {exc}"))
                return
            previous = controller.mode
            event = controller.desire(target, live.now())
            if event.kind == "tracking":                 # admitted: keep the change
                self.latest = latest
            if event.kind != "tracking" or previous != target.mode:
                live.report(event)

    def _target(self, latest):
        n = self.live.model.dof

        def value(name):
            return self.parameter(f"cartesian.{name}")

        def per_joint(name):             # one value for all joints, or n
            return np.resize(np.asarray(value(name), dtype=float), n)

        K = (latest["stiffness"] if latest["stiffness"] is not None
             else np.diag(np.asarray(value("stiffness"), dtype=float)))
        return CartesianTarget(value("law"), *latest["pose"], K, value("damping_ratio"),
                               latest["wrench"], latest["posture"], per_joint("nullspace_stiffness"),
                               per_joint("nullspace_torque_max"),
                               value("max_position_error"), value("max_orientation_error"))

    def _in_base(self, frame, R, p, what):
        """(R, p) given in `frame` → the base frame: base_link (or empty) as is; tip_link or
        a link of the chain relative to that link's pose at the last joint state."""
        model, frame = self.live.model, self.live.link(frame)
        if frame in ("", model.base_link):
            return R, p
        if frame != model.tip_link and frame not in model.body_links:
            raise ValueError(f"{what} frame_id '{frame}': expected '{model.base_link}', "
                             f"'{model.tip_link}' or a link of the chain "
                             f"({', '.join(model.body_links)})")
        state = self.live.controller.measured_state()
        if state is None:
            raise ValueError(f"no joint state yet to place frame '{frame}'")
        if frame == model.tip_link:
            R_f, p_f = self.live.solver.tip_pose(state[0])
        else:
            kinematics = forward_kinematics(model, state[0][None])
            i = model.body_links.index(frame)
            R_f, p_f = kinematics.R[0, i], kinematics.o[0, i]
        return R_f @ R, p_f + R_f @ p
