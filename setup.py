"""ament_python setup for robo_dynamics (colcon build, or pip install from PyPI wheels)."""

import glob
import os

from setuptools import find_packages, setup

PACKAGE = "robo_dynamics"


def share(folder, pattern="*"):
    """(install dir, files) for data_files: <prefix>/share/robo_dynamics/<folder>."""
    return (os.path.join("share", PACKAGE, folder),
            sorted(f for f in glob.glob(os.path.join(folder, pattern)) if os.path.isfile(f)))


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, PACKAGE + ".*"]),   # not test/ nor benchmarks/
    data_files=[
        ("share/ament_index/resource_index/packages", [os.path.join("resource", PACKAGE)]),
        (os.path.join("share", PACKAGE), ["package.xml"]),
        share("launch"),
        share("config"),
        share("urdf"),
        share("examples"),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="robo_dynamics developers",
    maintainer_email="dev@robo-dynamics.local",
    description="Live rigid-body dynamics for robot arms from their URDF.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "dynamics_demo = robo_dynamics.demo.run:main",
            "dynamics_check = robo_dynamics.cli.check:main",
            "dynamics_identify = robo_dynamics.cli.identify:main",
            "dynamics_compare = robo_dynamics.cli.compare:main",
            "dynamics_node = robo_dynamics.ros.dynamics_node.node:main",
            "sim_arm = robo_dynamics.ros.sim_arm.node:main",
        ],
    },
)
