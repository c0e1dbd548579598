"""Simulating an arm: its forward dynamics with joint friction, and integrators. No rclpy."""
