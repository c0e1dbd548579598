"""Where the package's shipped files (urdf/, config/, launch/) are on this machine."""

import pathlib
import sys

PACKAGE = "robo_dynamics"
DEFAULT_ARM = "rd_ur5e.urdf"


def share_directory():
    """The folder holding urdf/, config/ and launch/: the source tree when running from a
    checkout, else the install's share/robo_dynamics (colcon or pip)."""
    source_tree = pathlib.Path(__file__).resolve().parent.parent
    if (source_tree / "package.xml").is_file() and (source_tree / "urdf").is_dir():
        return source_tree
    try:
        from ament_index_python.packages import get_package_share_directory
        return pathlib.Path(get_package_share_directory(PACKAGE))
    except Exception:  # ament_index_python absent or the package not in an ament prefix
        return pathlib.Path(sys.prefix) / "share" / PACKAGE


def urdf_path(name=DEFAULT_ARM):
    """Path of a shipped URDF (default: the default arm)."""
    return share_directory() / "urdf" / name


def example_robots():
    """The robots/ folder of example-robot-data (real robots' URDFs, used by the tests, the
    benchmarks and dynamics_compare): from the ament index of a ROS install
    (ros-$ROS_DISTRO-example-robot-data), else from the pip distribution example-robot-data;
    None when neither is installed."""
    try:
        from ament_index_python.packages import get_package_share_directory
        robots = pathlib.Path(get_package_share_directory("example-robot-data")) / "robots"
        if robots.is_dir():
            return robots
    except Exception:  # ament_index_python absent, no AMENT_PREFIX_PATH, or not indexed
        pass
    import importlib.metadata
    try:
        files = importlib.metadata.distribution("example-robot-data").files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for path in files:              # e.g. cmeel.prefix/share/example-robot-data/robots/...
        if "robots" in path.parts[:-1]:
            below = len(path.parts) - path.parts.index("robots") - 2   # folders below robots/
            return pathlib.Path(path.locate()).parents[below]
    return None
