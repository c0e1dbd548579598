"""What rviz2 is given, rclpy-free: the arm's scale (scale.py), the config for a namespace
(config.py)."""
