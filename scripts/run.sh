#!/usr/bin/env bash
# Builds SliceHub (release) and runs the portal with the defaults: a SQLite file under
# ./data, GPUs from NVML when a driver is present (else a simulated A100-40GB), and the
# local Docker engine. Arguments go to `slicehub serve`'s global options, e.g. --config.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
# The notebook image a course starts by default: built with no registry the first time
# (about a minute), answered from its cache in seconds after that.
if docker info >/dev/null 2>&1; then
  docker/offline/build.sh || echo "run: the notebook image could not be built (see above); the portal starts without it" >&2
else
  echo "run: the Docker engine is not reachable: the portal starts, but no notebook can" >&2
  echo "run: until it is (then run docker/offline/build.sh once)." >&2
fi
cargo leptos build --release --precompress
exec target/release/slicehub "$@" serve
