#!/usr/bin/env bash
# Build robo_dynamics_interfaces (rosidl, ament_cmake) from PyPI wheels alone and install it
# into a virtual environment; before it, control_msgs (the FollowJointTrajectory part) when
# the venv has no control_msgs. Usage: install_into_venv.sh VENV [BUILD_DIR]
# The venv must already hold requirements.txt (rosidl generators, ament_cmake, messages).
# Workarounds from ../shared/notes/ros2-from-pypi.md: AMENT_PREFIX_PATH=$VIRTUAL_ENV while
# configuring, and the wheels' CMake files re-pointed at this venv's Python and NumPy headers.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=$(cd "$1" && pwd)
build=${2:-$here/../build/robo_dynamics_interfaces}
mkdir -p "$(dirname "$build")"
py="$venv/bin/python"

"$py" - "$venv" <<'PY'
import glob, sys, sysconfig
import numpy
venv = sys.argv[1]
replacements = {
    "/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include": numpy.get_include(),
    "/opt/python/cp311-cp311/include/python3.11": sysconfig.get_paths()["include"],
}
for path in glob.glob(f"{venv}/share/*/cmake/*.cmake"):
    text = original = open(path).read()
    for old, new in replacements.items():
        text = text.replace(old, new)
    if text != original:
        open(path, "w").write(text)
PY

export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" AMENT_PREFIX_PATH="$venv"
build_package() {   # build_package NAME BUILD_DIR: cmake configure, build, install
  cmake -S "$here/$1" -B "$2" -DCMAKE_INSTALL_PREFIX="$venv" \
    -DPython3_EXECUTABLE="$py" -DBUILD_TESTING=OFF -Wno-dev > "$2.configure.log" 2>&1 \
    || { cat "$2.configure.log"; exit 1; }
  cmake --build "$2" -j2 > "$2.build.log" 2>&1 || { tail -50 "$2.build.log"; exit 1; }
  cmake --install "$2" > /dev/null
}
ours="$venv/share/control_msgs/package.xml"     # a control_msgs this script built before
if "$py" -c "import control_msgs.action" 2> /dev/null \
   && ! grep -q "robo-dynamics" "$ours" 2> /dev/null; then
  echo "control_msgs found in $venv: not built"
else
  build_package control_msgs "$(dirname "$build")/control_msgs"
  "$py" -c "import control_msgs.action, control_msgs.msg"
  echo "control_msgs (FollowJointTrajectory) installed into $venv"
fi
build_package robo_dynamics_interfaces "$build"
"$py" -c "import robo_dynamics_interfaces.srv, robo_dynamics_interfaces.msg"
echo "robo_dynamics_interfaces installed into $venv"
