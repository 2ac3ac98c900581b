#!/usr/bin/env bash
# Make (or refresh) the venv of the ROS 2 peers: ROS 2's own Python client
# library from PyPI (ros-rclpy with Fast DDS as its middleware, rmw_fastrtps),
# the message packages usim speaks (std_msgs, nav_msgs, sensor_msgs,
# geometry_msgs, rosgraph_msgs, and std_srvs for the reset service; tf2_msgs
# has no wheel on PyPI), and the bag
# readers rosbags and mcap-ros2-support. A venv of its own: these wheels
# re-exec every Python process of their venv, so they stay apart from the
# other peers (scripts/py_env.sh). CPython 3.10 (the wheels exist for 3.10
# and 3.12).
#   scripts/ros2_env.sh [DIR]    (default: .venv-ros2 beside this script's repo)
# Prints the venv's python on its last line.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$repo/.venv-ros2}"
py=""
for c in "${USIM_PY310:-}" "$HOME/.pyenv/versions/3.10.13/bin/python" python3.10; do
    [ -n "$c" ] || continue
    if command -v "$c" >/dev/null 2>&1; then py="$c"; break; fi
done
[ -n "$py" ] || { echo "ros2_env.sh: no CPython 3.10 found (set USIM_PY310=/path/to/python3.10)" >&2; exit 1; }
[ -x "$dir/bin/python" ] || "$py" -m venv "$dir"
dir="$(cd "$dir" && pwd)"
"$dir/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
"$dir/bin/python" -m pip install --quiet \
    'ros-rclpy[fastrtps]==9.1.2' 'ros-std-msgs==5.5.1' 'ros-nav-msgs==5.5.1' \
    'ros-sensor-msgs==5.5.1' 'ros-geometry-msgs==5.5.1' 'ros-rosgraph-msgs==2.3.0' 'ros-std-srvs==5.5.1' \
    'rosbags==0.11.9' 'mcap-ros2-support==0.6.0'
echo "$dir/bin/python"
