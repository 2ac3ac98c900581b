#!/usr/bin/env bash
# Soak: one vehicle on a real mosquitto under a mixed flood of valid and
# hostile messages (up to 800/s) while the broker is killed and restarted every
# 30 s; prints RSS over time, QoS 1 commands lost after each reconnection
# and the vehicle's tick lateness. See examples/soak.rs.
#
#   scripts/soak.sh MINUTES
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:?usage: scripts/soak.sh MINUTES}
MOSQUITTO=${MOSQUITTO:-$(command -v mosquitto || echo /usr/sbin/mosquitto)}
cargo build --release --bin usim --example soak
TARGET=${CARGO_TARGET_DIR:-target}
"$TARGET/release/examples/soak" "$MINUTES" "$TARGET/release/usim" "$MOSQUITTO"
