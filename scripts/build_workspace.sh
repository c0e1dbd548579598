#!/usr/bin/env bash
# Build robo_dynamics and robo_dynamics_interfaces with colcon in a ROS 2 workspace, against
# the PyPI-wheel ROS 2 of a virtual environment (what `make venv` builds).
# Usage: scripts/build_workspace.sh VENV WORKSPACE
#   WORKSPACE/src/robo_dynamics is made a copy of this repository (tracked files), then
#   `colcon build` runs there; afterwards `source WORKSPACE/install/setup.bash`.
# With an apt-installed ROS 2 none of this is needed: README, "In a ROS 2 workspace".
# The wheels need two fixes (../shared notes, and interfaces/install_into_venv.sh, which
# `make venv` ran already): AMENT_PREFIX_PATH=$VIRTUAL_ENV while building, and the wheels'
# CMake files pointed at this venv's Python headers.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=$(cd "$1" && pwd)
mkdir -p "$2/src"
ws=$(cd "$2" && pwd)
rm -rf "$ws/src/robo_dynamics"
mkdir -p "$ws/src/robo_dynamics"
git -C "$repo" ls-files -z | (cd "$repo" && xargs -0 cp --parents -t "$ws/src/robo_dynamics")

export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" AMENT_PREFIX_PATH="$venv"
cd "$ws"
# colcon does not look inside a package for more packages: name the nested one
colcon --log-base "$ws/log" build --base-paths src src/robo_dynamics/interfaces \
  --cmake-args -DPython3_EXECUTABLE="$venv/bin/python" -DBUILD_TESTING=OFF -Wno-dev
colcon --log-base "$ws/log" graph --base-paths src src/robo_dynamics/interfaces
echo "workspace built: source $ws/install/setup.bash"
