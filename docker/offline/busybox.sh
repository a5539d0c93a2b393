#!/usr/bin/env bash
# Build slicehub/busybox:offline, a ~2 MB FROM-scratch image for fast container tests (a
# stand-in for a training job): Debian's static busybox as /bin/busybox, with sh, sleep, echo,
# cat, env, id, true, false and a few more linked to it; user 1000:100 (jovyan:users) with a
# writable /home/jovyan, as in the JupyterLab image. No registry needed.
#
# Tags: slicehub/busybox:<hash of this script> and the alias slicehub/busybox:offline. An
# unchanged script answers "cached" at once.
#
# The binary comes from the installed busybox-static package when there is one, otherwise
# from `apt-get download busybox-static` (this machine's apt sources). No root needed.
#
# Usage: docker/offline/busybox.sh [--print-tag]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=slicehub/busybox
alias_tag=$repo:offline
applets=(sh sleep echo cat env id true false ls printf kill date head tail wc seq nc)

start=$EPOCHREALTIME
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
hash=$({ sha256sum <"$here/busybox.sh" && echo "$arch"; } | sha256sum | cut -c1-12)
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
  echo "busybox.sh: $*" >&2
  exit 1
}

if id=$(image_id "$image"); then
  [[ $(image_id "$alias_tag" || true) == "$id" ]] || docker tag "$image" "$alias_tag"
  echo "cached: $image (alias $alias_tag) in $(since "$start")s"
  exit 0
fi
docker info >/dev/null 2>&1 || die "cannot reach the Docker engine (is it running, may $(id -un) use it?)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/tree
mkdir -p "$tree/bin" "$tree/etc" "$tree/tmp" "$tree/home/jovyan" "$tree/root" "$tree/dev" "$tree/proc" "$tree/sys"

if dpkg-query -W -f '${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' && [[ -x /bin/busybox ]]; then
  cp /bin/busybox "$tree/bin/busybox"
  from="the installed busybox-static $(dpkg-query -W -f '${Version}' busybox-static)"
else
  mkdir "$work/deb"
  sandbox=()
  [[ $EUID -eq 0 ]] && sandbox=(-o APT::Sandbox::User=root)
  (cd "$work/deb" && apt-get download "${sandbox[@]}" busybox-static >/dev/null) ||
    die "no busybox-static: neither installed nor downloadable with apt-get"
  dpkg-deb -x "$work"/deb/busybox-static_*.deb "$work/deb/x"
  cp "$work/deb/x/bin/busybox" "$tree/bin/busybox"
  from=$(basename "$work"/deb/busybox-static_*.deb)
fi
for a in "${applets[@]}"; do ln -s busybox "$tree/bin/$a"; done
printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'jovyan:x:1000:100::/home/jovyan:/bin/sh' \
  'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$tree/etc/passwd"
printf '%s\n' 'root:x:0:' 'users:x:100:' 'nogroup:x:65534:' >"$tree/etc/group"
chmod 1777 "$tree/tmp"
chmod 700 "$tree/root"

# Owned by root, but /home/jovyan by 1000:100; no root needed to write that into the tar.
tar -C "$tree" --numeric-owner --owner=0 --group=0 --exclude=./home/jovyan -cf "$work/rootfs.tar" .
tar -C "$tree" --numeric-owner --owner=1000 --group=100 --no-recursion -rf "$work/rootfs.tar" ./home/jovyan

new_id=$(docker import \
  --message "SliceHub busybox test image, recipe $hash, from $from" \
  --change 'ENV PATH=/bin' \
  --change 'ENV HOME=/home/jovyan' \
  --change 'USER 1000:100' \
  --change 'WORKDIR /home/jovyan' \
  --change 'LABEL org.slicehub.image=busybox' \
  --change "LABEL org.slicehub.recipe=$hash" \
  --change 'CMD ["sh"]' \
  "$work/rootfs.tar" "$image")
docker tag "$new_id" "$alias_tag"
echo "built $image (alias $alias_tag) from $from in $(since "$start")s"
