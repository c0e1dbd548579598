"""Reading files: trajectories (YAML) and joint states recorded in ROS 2 bags (MCAP)."""
