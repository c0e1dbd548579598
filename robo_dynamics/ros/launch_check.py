"""What the launch file checks before it starts anything: are the ROS packages it would run
installed (found in the ament index of the sourced workspaces)?"""

from ament_index_python.packages import PackageNotFoundError, get_package_prefix

# what to install, for the apt-installed ROS 2 a ROS user has
APT = "sudo apt install ros-$ROS_DISTRO-{}"


def missing_packages(packages, why=None):
    """None if every package in `packages` is installed, else one message naming those that
    are not and how to install them. why: {package: the launch argument that asked for it}."""
    why = why or {}
    missing = []
    for package in packages:
        try:
            get_package_prefix(package)
        except (PackageNotFoundError, OSError):   # OSError: no AMENT_PREFIX_PATH at all
            missing.append(package)
    if not missing:
        return None
    lines = [f"{package} is not installed{f' ({why[package]})' if package in why else ''}: "
             f"{APT.format(package.replace('_', '-'))}" for package in missing]
    return ("nothing was started: " + "; ".join(lines)
            + " (then source /opt/ros/$ROS_DISTRO/setup.bash again)")
