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
