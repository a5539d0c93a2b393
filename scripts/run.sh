#!/usr/bin/env bash
# Builds SliceHub (release) and runs the portal with the defaults: a SQLite file under
# ./data, GPUs from NVML when a driver is present (else a simulated A100-40GB), and the
# local Docker engine. Arguments go to `slicehub serve`'s global options, e.g. --config.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
cargo leptos build --release
exec target/release/slicehub "$@" serve
