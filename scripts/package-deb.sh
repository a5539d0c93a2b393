#!/usr/bin/env bash
# Builds the Debian package (target/debian/slicehub_VERSION-1_ARCH.deb) with cargo-deb:
# the release binary, the browser assets, the systemd unit, the default configuration.
#   scripts/package-deb.sh            build the release portal and bundle first, then package
#   scripts/package-deb.sh --no-build package the binary and target/site already built
#                                     (SLICEHUB_DEB_PROFILE=dev: the debug binary; tests)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh --package >&2
profile=${SLICEHUB_DEB_PROFILE:-release}
if [[ ${1:-} != --no-build ]]; then
  cargo leptos build --release --precompress
  profile=release
fi
[[ -s target/site/pkg/slicehub.wasm ]] || { echo "package-deb: no target/site: run cargo leptos build first" >&2; exit 1; }

# The precompressed copies carry the time they were made in their gzip header; zero it, so
# two builds of the same bundle package the same bytes.
find target/site -name '*.gz' -type f -exec sh -c \
  'for f; do printf "\0\0\0\0" | dd of="$f" bs=1 seek=4 count=4 conv=notrunc status=none; done' _ {} +

args=(-p slicehub-server --no-build)
[[ $profile == release ]] || args+=(--profile "$profile" --fast)
cargo deb "${args[@]}"
