"""URDF → immutable chain model, with validation. No rclpy, no Pinocchio."""

from .loader import load_robot
from .robot_model import RobotModel

__all__ = ["load_robot", "RobotModel"]
