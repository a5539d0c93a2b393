#!/usr/bin/env bash
# Build slicehub/debian:offline, a clean Debian bookworm (debootstrap minbase, plus iptables:
# the one dependency of the package beyond it, so installing the package needs no network)
# with no image registry: the system the Debian package's test installs into, and the base
# of the portal image (portal.sh).
#
# Tags: slicehub/debian:<hash of this script> and the alias slicehub/debian:offline; an
# unchanged script answers "cached" at once. The rootfs is cached in target/docker-cache/
# (or $SLICEHUB_DOCKER_CACHE). Needs root (debootstrap) unless that cache is there.
#
# Usage: docker/offline/debian.sh [--print-tag]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$(dirname "$here")")
repo=slicehub/debian
alias_tag=$repo:offline
suite=bookworm

start=$EPOCHREALTIME
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
hash=$({ sha256sum <"$here/debian.sh" && echo "$arch"; } | sha256sum | cut -c1-12)
image=$repo:$hash

if [[ ${1:-} == --print-tag ]]; then
  echo "$image"
  exit 0
elif [[ $# -gt 0 ]]; then
  echo "usage: $0 [--print-tag]" >&2
  exit 2
fi

since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
image_id() { docker image inspect --format '{{.Id}}' "$1" 2>/dev/null; }
die() {
  echo "debian.sh: $*" >&2
  exit 1
}

if image_id "$image" >/dev/null; then
  docker tag "$image" "$alias_tag"
  echo "cached: $image (alias $alias_tag) in $(since "$start")s"
  exit 0
fi
docker info >/dev/null 2>&1 || die "cannot reach the Docker engine (is it running, may $(id -un) use it?)"

cache=${SLICEHUB_DOCKER_CACHE:-$root/target/docker-cache}
mkdir -p "$cache"
log=$cache/debian-build.log
final_tar=$cache/debian-rootfs-$hash.tar
exec 9>"$cache/.debian.lock"
flock 9
image_id "$image" >/dev/null && { docker tag "$image" "$alias_tag"; echo "cached: $image"; exit 0; }

rootfs=
cleanup() {
  if [[ -n $rootfs && -d $rootfs ]] && ! grep -q " $rootfs/" /proc/self/mounts; then
    rm -rf --one-file-system "$rootfs"
  fi
  rm -f "$final_tar.partial"
}
trap cleanup EXIT

if [[ -f $final_tar ]]; then
  echo "rootfs: cached $(basename "$final_tar")"
else
  [[ $EUID -eq 0 ]] || die "needs root to build the rootfs (debootstrap); run it as root, e.g. sudo $0"
  command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
  mirror=$("$here/debian-mirror.sh") || die "no Debian mirror in this machine's apt sources; set SLICEHUB_DEBIAN_MIRROR"
  apt_proxy=
  eval "$(apt-config shell apt_proxy Acquire::http::Proxy 2>/dev/null || true)"
  if [[ -n $apt_proxy && -z ${http_proxy:-} ]]; then export http_proxy=$apt_proxy; fi
  echo "building $image: debootstrap --variant=minbase $suite from $mirror (log $log)"
  t=$EPOCHREALTIME
  rootfs=$(mktemp -d "$cache/debian-rootfs.XXXXXX")
  chmod 755 "$rootfs"
  if ! debootstrap --variant=minbase --include=iptables --arch="$arch" "$suite" "$rootfs" "$mirror" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "debootstrap failed; the end of $log is above"
  fi
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  : >"$rootfs/etc/resolv.conf"
  tar -C "$rootfs" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' \
    -cf "$final_tar.partial" .
  mv "$final_tar.partial" "$final_tar"
  echo "rootfs ($(du -m "$final_tar" | cut -f1) MB): $(since "$t")s"
fi

docker import \
  --message "Debian $suite minbase for SliceHub's package test, recipe $hash" \
  --change 'ENV LANG=C.UTF-8' \
  --change "LABEL org.slicehub.recipe=$hash" \
  --change 'CMD ["/bin/bash"]' \
  "$final_tar" "$image" >/dev/null
docker tag "$image" "$alias_tag"
for f in "$cache"/debian-rootfs-*.tar; do
  [[ -e $f && $f != "$final_tar" ]] && rm -f "$f"
done
echo "built: $image (alias $alias_tag) in $(since "$start")s"
