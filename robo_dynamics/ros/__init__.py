"""The ROS 2 layer: nodes, message conversions, markers. The only importer of rclpy."""
