"""Control laws and input handling as pure functions and small classes: no rclpy."""
