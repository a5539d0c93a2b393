#!/usr/bin/env bash
# Build slicehub/slurm, the image of SliceHub's test Slurm cluster, with no image registry:
# the offline JupyterLab image (docker/offline/build.sh) plus Debian's slurmctld, slurmd,
# slurmrestd, its JWT plugin and munge, installed in a chroot from this machine's apt mirror.
# One image for every host: `controller` runs slurmctld and slurmrestd, `node` runs slurmd
# (and the jobs, with JupyterLab from /opt/venv) — see docker/slurm/slurm-entrypoint.
#
# Tags: slicehub/slurm:<recipe hash> and the alias slicehub/slurm:offline. The hash covers
# this script, docker/slurm/* and the JupyterLab image's tag; an unchanged recipe answers
# "cached" at once. The finished rootfs is cached in target/docker-cache (or
# $SLICEHUB_DOCKER_CACHE), so after `docker rmi` the image comes back in seconds.
#
# Usage: docker/offline/slurm.sh [--print-tag]    (builds the JupyterLab image first if needed)
# Needs root (chroot) unless the finished rootfs is cached.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
docker_dir=$(dirname "$here")
root=$(dirname "$docker_dir")
repo=slicehub/slurm
alias_tag=$repo:offline
packages=(slurmctld slurmd slurmrestd slurm-wlm-jwt-plugin munge)

start=$EPOCHREALTIME
jupyterlab=$("$here/build.sh" --print-tag)
hash=$({ cd "$docker_dir" && sha256sum offline/slurm.sh slurm/* && echo "$jupyterlab"; } | sha256sum | cut -c1-12)
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
  echo "slurm.sh: $*" >&2
  exit 1
}

if image_id "$image" >/dev/null; then
  docker tag "$image" "$alias_tag"
  echo "cached: $image (alias $alias_tag) in $(since "$start")s"
  exit 0
fi

cache=${SLICEHUB_DOCKER_CACHE:-$root/target/docker-cache}
mkdir -p "$cache"
log=$cache/slurm-build.log
final_tar=$cache/slurm-rootfs-$hash.tar
exec 9>"$cache/.slurm.lock"
flock 9
image_id "$image" >/dev/null && { docker tag "$image" "$alias_tag"; echo "cached: $image"; exit 0; }

rootfs=
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" || true
  done
  if [[ -n $rootfs && -d $rootfs ]] && ! grep -q " $rootfs/" /proc/self/mounts; then
    rm -rf --one-file-system "$rootfs"
  fi
  rm -f "$final_tar.partial"
}
trap cleanup EXIT

if [[ -f $final_tar ]]; then
  echo "rootfs: cached $(basename "$final_tar")"
else
  [[ $EUID -eq 0 ]] || die "needs root to build the rootfs (chroot); run it as root, e.g. sudo $0"
  "$here/build.sh" >/dev/null
  : >"$log"
  echo "building $image (log $log)"
  t=$EPOCHREALTIME
  rootfs=$(mktemp -d "$cache/slurm-rootfs.XXXXXX")
  chmod 755 "$rootfs"
  container=$(docker create "$jupyterlab" /bin/true)
  docker export "$container" | tar -C "$rootfs" --numeric-owner -xpf -
  docker rm "$container" >/dev/null
  cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf"
  # An exported image has an empty /dev; apt needs /dev/null.
  mount -t proc proc "$rootfs/proc"
  mounts+=("$rootfs/proc")
  mount --bind /dev "$rootfs/dev"
  mounts+=("$rootfs/dev")
  if ! chroot "$rootfs" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive sh -ec "
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends ${packages[*]}
      useradd --system --no-create-home --shell /usr/sbin/nologin slurmrest
      mkdir -p /var/lib/slicehub-gres
      for i in 0 1 2 3 4 5 6 7; do : > /var/lib/slicehub-gres/gpu\$i; done
      apt-get clean
      rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old /root/.cache
      find /var/log -type f -delete" >>"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "installing Slurm failed; the end of $log is above"
  fi
  umount "$rootfs/dev" "$rootfs/proc"
  mounts=()
  install -m 0644 "$docker_dir/slurm/slurm.conf" "$docker_dir/slurm/gres.conf" "$rootfs/etc/slurm/"
  install -m 0755 "$docker_dir/slurm/slurm-entrypoint" "$rootfs/usr/local/bin/slurm-entrypoint"
  : >"$rootfs/etc/resolv.conf"
  tar -C "$rootfs" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' \
    -cf "$final_tar.partial" .
  mv "$final_tar.partial" "$final_tar"
  echo "rootfs ($(du -m "$final_tar" | cut -f1) MB): $(since "$t")s"
fi

docker import \
  --message "SliceHub test Slurm cluster, recipe $hash" \
  --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change "LABEL org.slicehub.recipe=$hash" \
  --change 'ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/slurm-entrypoint"]' \
  "$final_tar" "$image" >/dev/null
docker tag "$image" "$alias_tag"
for f in "$cache"/slurm-rootfs-*.tar; do
  [[ -e $f && $f != "$final_tar" ]] && rm -f "$f"
done
echo "built: $image (alias $alias_tag) in $(since "$start")s"
