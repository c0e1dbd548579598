"""sim_arm: a simulated arm that closes the loop in place of the hardware.

Integrates the URDF's dynamics at a fixed step and publishes joint_states (positions,
velocities and the applied efforts; while the brakes hold, the holding torque) at
publish_rate; takes effort commands as
std_msgs/Float64MultiArray in command_joints order (what a ros2_control
JointGroupEffortController receives) on `effort_commands`; holds the last command for at
most command_timeout, then brakes (or, with brakes false, applies zero). A payload the controller does not know about can
be added to make model errors visible.
"""

import sys
import warnings

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .. import ModelWarning, load_robot, make_solver
from ..simulation.integrators import INTEGRATORS
from ..simulation.simulated_arm import SimulatedArm
from ..spatial.inertia import inertia_tensor
from .spin import run

THROTTLE = 2.0
MAX_CATCH_UP = 20          # integration steps per timer tick at most

# name → (default, description); a default of a Parameter.Type is declared unset
PARAMETERS = {
    "robot_description": ("", "URDF XML text (else robot_description_file)"),
    "robot_description_file": ("", "Path of a .urdf or .xacro file"),
    "base_link": ("", "First link of the simulated chain ('' = URDF root)"),
    "tip_link": ("", "Last link of the simulated chain ('' = the only leaf)"),
    "gravity": ([0.0, 0.0, -9.81], "Gravity in base_link [m/s^2]"),
    "backend": ("pinocchio", "Solver for the forward dynamics: pinocchio or rnea"),
    "integrator": ("rk4", f"One of {sorted(INTEGRATORS)}"),
    "time_step": (0.001, "Integration step [s]"),
    "publish_rate": (1000.0, "joint_states rate [Hz]; the simulation advances in real time"),
    "command_joints": (Parameter.Type.STRING_ARRAY,
                       "Joint order of effort_commands; unset = chain order"),
    "command_timeout": (0.05, "A command older than this [s] engages the brakes (zero torque "
                               "without brakes)"),
    "friction": (False, "Apply the URDF's <dynamics damping friction>"),
    "brakes": (True, "Hold the arm still until the first effort command arrives, and again "
                     "whenever the command times out"),
    "initial_positions": (Parameter.Type.DOUBLE_ARRAY,
                          "Initial joint positions, chain order [rad or m]; unset = zeros"),
    "payload_link": ("", "Link of a payload only the simulation knows ('' = none)"),
    "payload_mass": (0.0, "Payload mass [kg]"),
    "payload_com": ([0.0, 0.0, 0.0], "Payload centre of mass in payload_link [m]"),
    "payload_inertia": ([0.0] * 6, "Payload inertia about its COM: ixx ixy ixz iyy iyz izz"),
}


class SimArmNode(Node):
    """See the module docstring."""

    def __init__(self, **kwargs):
        super().__init__("sim_arm", **kwargs)
        for name, (default, text) in PARAMETERS.items():
            self.declare_parameter(name, default, ParameterDescriptor(description=text,
                                                                      read_only=True))
        p = {name: self._value(name) for name in PARAMETERS}
        description = p["robot_description"] or p["robot_description_file"]
        if not description:
            raise ValueError("set robot_description or robot_description_file")
        with warnings.catch_warnings():      # the plant takes the file as it is; the
            warnings.simplefilter("ignore", ModelWarning)     # dynamics node reports them
            model = load_robot(description, base_link=p["base_link"] or None,
                               tip_link=p["tip_link"] or None, gravity=list(p["gravity"]))
        if p["payload_link"] and p["payload_mass"] > 0.0:
            model = model.with_payload(p["payload_link"], p["payload_mass"], p["payload_com"],
                                       inertia_tensor(*p["payload_inertia"]))
        q0 = np.zeros(model.dof) if p["initial_positions"] is None else np.array(
            p["initial_positions"], dtype=float)
        if q0.shape != (model.dof,) or not np.all(np.isfinite(q0)):
            raise ValueError(f"initial_positions needs {model.dof} finite values")
        if not 0.0 < p["publish_rate"] <= 10_000.0:
            raise ValueError(f"publish_rate must be in (0, 10000] Hz, got {p['publish_rate']}")
        self.arm = SimulatedArm(make_solver(model, p["backend"]), q0,
                                integrator=p["integrator"], time_step=p["time_step"],
                                command_timeout=p["command_timeout"], friction=p["friction"],
                                brakes=p["brakes"])
        command = p["command_joints"] or list(model.joint_names)
        self.command_index = np.array([model.joint_index(name) for name in command])
        if len(set(command)) != len(command):
            raise ValueError("command_joints has duplicates")
        self.model = model
        self.names = list(model.joint_names)
        self.rejected = 0
        self.pub = self.create_publisher(JointState, "joint_states", 10)
        self.create_subscription(Float64MultiArray, "effort_commands", self._on_command, 10)
        self.start = None          # clock time [s] at which simulated time was 0
        self.create_timer(1.0 / p["publish_rate"], self._tick)
        self.get_logger().info(
            f"simulating {model.name} ({model.dof} joints, {p['integrator']}, h = "
            f"{self.arm.h} s, joint_states at {p['publish_rate']} Hz)"
            + (f", unknown payload {p['payload_mass']} kg at {p['payload_link']}"
               if model.payloads else ""))

    def _value(self, name):
        try:
            return self.get_parameter(name).value
        except ParameterUninitializedException:
            return None

    def _on_command(self, msg):
        data = np.asarray(msg.data, dtype=float)
        if data.shape != self.command_index.shape or not np.all(np.isfinite(data)):
            self.rejected += 1
            self.get_logger().warning(
                f"effort command rejected ({self.rejected} so far): expected "
                f"{self.command_index.size} finite values, got {data.size}",
                throttle_duration_sec=THROTTLE)
            return
        tau = np.zeros(self.model.dof)                 # joints not commanded get zero
        tau[self.command_index] = data
        self.arm.set_command(tau)

    def _tick(self):
        """Advance simulated time to the clock (in steps of h, at most MAX_CATCH_UP per tick,
        so a stalled process slows the simulation down instead of jumping), then publish."""
        now = self.get_clock().now()
        seconds = now.nanoseconds * 1e-9
        if self.start is None:
            self.start = seconds
        steps = int((seconds - self.start - self.arm.t) / self.arm.h + 0.5)
        applied = self.arm.applied_torque()
        for _ in range(min(max(steps, 0), MAX_CATCH_UP)):
            applied = self.arm.step()
        if steps > MAX_CATCH_UP:             # fell behind: let simulated time slip
            self.start += (steps - MAX_CATCH_UP) * self.arm.h
        effort = self.arm.measured_effort() if self.arm.braked else applied
        msg = JointState(name=self.names, position=self.arm.q.tolist(),
                         velocity=self.arm.v.tolist(), effort=effort.tolist())
        msg.header.stamp = now.to_msg()
        self.pub.publish(msg)


def main(args=None):
    return run(SimArmNode, args)


if __name__ == "__main__":
    sys.exit(main())
