#!/usr/bin/env bash
# Runs every test: unit, store (SQLite and PostgreSQL), CLI/HTTP against the real binary,
# and browser tests in Debian's Chromium. Installs what is missing first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh --test
SLICEHUB_TEST_DATABASE_URL="$(scripts/pg.sh)"
export SLICEHUB_TEST_DATABASE_URL

# Session networks left by test portals that were killed rather than stopped: Docker's
# default address pools hold only a few dozen networks. Nothing of this run exists yet.
docker network prune -f --filter label=org.slicehub.managed=true >/dev/null

# The images the container tests run: a tiny one for jobs (seconds), the real JupyterLab
# one and the Slurm cluster's (JupyterLab plus Debian's Slurm), and a clean Debian the
# package is installed into, built with no registry (a few minutes once; cached after).
# The Slurm test starts its cluster itself; the package test builds the package and the
# portal image from it.
docker/offline/busybox.sh
docker/offline/build.sh
docker/offline/slurm.sh
docker/offline/debian.sh

# The wasm bundle and stylesheet the browser tests load (target/site), built as the run
# command builds them (release: wasm-opt and all), so the browser tests see what users get.
# The server the tests start is the debug one `cargo test` builds below.
cargo leptos build --release --precompress --frontend-only

# Every crate but the wasm entry point; with -p/--package, only the crates named (cargo
# would otherwise ignore -p beside --workspace).
scope=(--workspace --exclude slicehub-frontend)
for arg in "$@"; do
  case "$arg" in -p|--package|-p?*|--package=*) scope=() ;; esac
done
# Most tests wait on containers, JupyterLab and Chromium rather than compute, so each
# binary runs four at a time, even on two cores (a fifth to a third less time than the
# default of one per core); the tests that measure the machine itself have binaries of
# their own. RUST_TEST_THREADS set by the caller wins.
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-4}"
cargo test "${scope[@]}" --no-fail-fast "$@"
