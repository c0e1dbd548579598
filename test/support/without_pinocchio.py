"""Run in a process of its own with Pinocchio made unimportable (test_without_pinocchio):

    python test/support/without_pinocchio.py URDF Q_JSON

uses the library's rnea backend, dynamics_node (backend rnea) and sim_arm (backend rnea)
together over ROS 2, and prints one JSON object of what they computed and said, for the
test to compare against Pinocchio in its own process.
"""

import json
import os
import sys

sys.modules["pinocchio"] = None      # `import pinocchio` now raises ImportError

from robo_dynamics.ros.isolation import isolate     # noqa: E402

if "ROS_DOMAIN_ID" not in os.environ:
    sys.exit("without_pinocchio: ROS_DOMAIN_ID must be set by the test that starts it")
isolate(os.environ["ROS_DOMAIN_ID"])

import numpy as np                                    # noqa: E402
import rclpy                                          # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray       # noqa: E402
from rclpy.executors import SingleThreadedExecutor    # noqa: E402
from rclpy.parameter import Parameter                 # noqa: E402
from sensor_msgs.msg import JointState                # noqa: E402

import robo_dynamics as rd                            # noqa: E402
from robo_dynamics.ros.dynamics_node.node import DynamicsNode
from robo_dynamics.ros.sim_arm.node import SimArmNode


def library(urdf, q):
    robot = rd.load_robot(urdf)
    solver = rd.make_solver(robot, "rnea")
    qd, qdd = np.linspace(-1.0, 1.0, robot.dof), np.linspace(2.0, -2.0, robot.dof)
    dq, dv, M = solver.inverse_dynamics_derivatives(q, qd, qdd)
    out = {"tau": solver.inverse_dynamics(q, qd, qdd), "M": M, "dq": dq, "dv": dv,
           "J": solver.jacobian(q), "Lambda": solver.operational_space_inertia(q)}
    out = {key: np.asarray(value).tolist() for key, value in out.items()}
    try:
        rd.make_solver(robot, "pinocchio")
        out["pinocchio_backend"] = "built"
    except rd.BackendUnavailable as exc:
        out["pinocchio_backend"] = str(exc)
    return out


def nodes(urdf, q):
    """sim_arm (brakes on: the arm rests at q) → joint_states → dynamics_node; the gravity
    torques it publishes and its diagnostics."""
    description = Parameter("robot_description_file", value=urdf)
    backend = Parameter("backend", value="rnea")
    sim = SimArmNode(parameter_overrides=[description, backend,
                                          Parameter("initial_positions", value=list(q))])
    node = DynamicsNode(parameter_overrides=[
        description, backend, Parameter("diagnostics_rate", value=20.0),
        Parameter("cross_check_rate", value=20.0)])
    listener = rclpy.create_node("listener")
    seen = {}
    listener.create_subscription(JointState, "/dynamics_node/gravity_torques",
                                 lambda msg: seen.setdefault("gravity", list(msg.effort)), 10)
    listener.create_subscription(JointState, "/joint_states",
                                 lambda msg: seen.setdefault("state", list(msg.position)), 10)

    def on_diagnostics(msg):
        values = {kv.key: kv.value for status in msg.status for kv in status.values}
        if "cross_check" in values and "gravity" in seen:
            seen["diagnostics"] = values
    listener.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    executor = SingleThreadedExecutor()
    for n in (sim, node, listener):
        executor.add_node(n)
    while not {"gravity", "state", "diagnostics"} <= seen.keys():
        executor.spin_once(timeout_sec=0.1)
    for n in (sim, node, listener):
        n.destroy_node()
    return seen


def main():
    urdf, q = sys.argv[1], np.array(json.loads(sys.argv[2]), dtype=float)
    out = library(urdf, q)
    rclpy.init()
    try:
        out.update(nodes(urdf, q))
    finally:
        rclpy.shutdown()
    out["pinocchio_imported"] = sys.modules.get("pinocchio") is not None
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
