#!/usr/bin/env bash
# Build the SliceHub JupyterLab image with no image registry: only Debian's apt mirror (the
# one this machine's apt uses) and PyPI (through this machine's pip configuration).
#
#   debootstrap (bookworm, minbase) -> chroot: venv + pip install JupyterLab -> docker import
#
# Tags: slicehub/jupyterlab:<recipe hash> and the alias slicehub/jupyterlab:offline. The hash
# covers this script and docker/common/{slicehub-notebook,slicehub_auth.py,jupyterlab-overrides.json,requirements.txt,constraints.txt}, so
# a changed recipe builds a new tag; an unchanged one answers "cached" at once.
# Caches (target/docker-cache/, or $SLICEHUB_DOCKER_CACHE): the debootstrap rootfs, keyed by
# its own inputs, and the finished rootfs, keyed by the recipe hash; after `docker rmi` the
# image comes back from the second in seconds. Only the current ones are kept.
#
# Usage: docker/offline/build.sh [--print-tag]
# Needs root (debootstrap, chroot) unless the finished rootfs is already cached.
# SLICEHUB_DEBIAN_MIRROR overrides the mirror read from /etc/apt.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
docker_dir=$(dirname "$here")
root=$(dirname "$docker_dir")
repo=slicehub/jupyterlab
alias_tag=$repo:offline
suite=bookworm
packages=python3,python3-venv,ca-certificates,tini
inputs=(offline/build.sh offline/debian-mirror.sh common/slicehub-notebook common/slicehub_auth.py common/jupyterlab-overrides.json common/requirements.txt common/constraints.txt)

start=$EPOCHREALTIME
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
hash=$({ cd "$docker_dir" && sha256sum "${inputs[@]}" && echo "$arch"; } | sha256sum | cut -c1-12)
image=$repo:$hash

if [[ ${1:-} == --print-tag ]]; then
  echo "$image"
  exit 0
elif [[ $# -gt 0 ]]; then
  echo "usage: $0 [--print-tag]" >&2
  exit 2
fi

since() { # seconds since $1 (an $EPOCHREALTIME), one decimal
  local now=$EPOCHREALTIME
  awk -v a="$1" -v b="$now" 'BEGIN { printf "%.1f", b - a }'
}

image_id() { docker image inspect --format '{{.Id}}' "$1" 2>/dev/null; }

# Point the alias at image $1, and delete the image it pointed at before if that is left untagged.
set_alias() {
  local old
  old=$(image_id "$alias_tag" || true)
  [[ $old == "$1" ]] && return
  docker tag "$1" "$alias_tag"
  if [[ -n $old && $(docker image inspect --format '{{len .RepoTags}}' "$old" 2>/dev/null) == 0 ]]; then
    docker rmi "$old" >/dev/null 2>&1 || true
  fi
}

# Use $image if it is there (or, untagged with `docker rmi`, still behind the alias); report.
use_existing() {
  local id
  if ! id=$(image_id "$image"); then
    id=$(image_id "$alias_tag") || return 1
    [[ $(docker image inspect --format '{{index .Config.Labels "org.slicehub.recipe"}}' "$id") == "$hash" ]] || return 1
    docker tag "$id" "$image"
  fi
  set_alias "$id"
  echo "cached: $image (alias $alias_tag) in $(since "$start")s"
}

use_existing && exit 0

# --- from here on, something has to be built -----------------------------------------------

die() {
  echo "build.sh: $*" >&2
  exit 1
}
docker info >/dev/null 2>&1 || die "cannot reach the Docker engine (is it running, may $(id -un) use it?)"

cache=${SLICEHUB_DOCKER_CACHE:-$root/target/docker-cache}
mkdir -p "$cache"
log=$cache/jupyterlab-build.log
base_key=$(echo "debootstrap minbase $suite $packages $arch v1" | sha256sum | cut -c1-12)
base_tar=$cache/$suite-minbase-$base_key.tar
final_tar=$cache/jupyterlab-rootfs-$hash.tar

# One build at a time per cache; a build that waited may find the image already made.
exec 9>"$cache/.jupyterlab.lock"
if ! flock -n 9; then
  echo "another build holds $cache/.jupyterlab.lock; waiting..."
  flock 9
fi
use_existing && exit 0

# Keep CPU and disk modest: others share this machine.
renice -n 10 -p $$ >/dev/null 2>&1 || true
ionice -c 2 -n 7 -p $$ >/dev/null 2>&1 || true

# run STEP CMD...: run CMD with its output in $log; show the end of it if it fails.
run() {
  local step=$1
  shift
  echo "=== $step: $*" >>"$log"
  if ! "$@" >>"$log" 2>&1; then
    echo "build.sh: $step failed; the end of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}

rootfs=
mounts=()
cleanup() {
  local m
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    m=${mounts[i]}
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  if [[ -n $rootfs && -d $rootfs ]]; then
    # Never delete through a mount that is still there.
    if grep -q " $rootfs/" /proc/self/mounts; then
      echo "build.sh: something is still mounted under $rootfs; not deleting it" >&2
    else
      rm -rf --one-file-system "$rootfs"
    fi
  fi
  rm -f "$base_tar.partial" "$final_tar.partial"
}
trap cleanup EXIT

: >"$log"
echo "building $image (recipe $hash; log $log)"

if [[ -f $final_tar ]]; then
  echo "rootfs: cached $(basename "$final_tar")"
else
  [[ $EUID -eq 0 ]] || die "needs root to build the rootfs (debootstrap and chroot); run it as root, e.g. sudo $0"
  command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  chmod 755 "$rootfs"

  # 1. The Debian base.
  t=$EPOCHREALTIME
  if [[ -f $base_tar ]]; then
    run "unpack base" tar -C "$rootfs" --numeric-owner -xpf "$base_tar"
    echo "debootstrap: cached $(basename "$base_tar"), unpacked in $(since "$t")s"
  else
    mirror=$("$here/debian-mirror.sh") || die "no Debian mirror in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list; set SLICEHUB_DEBIAN_MIRROR"
    apt_proxy=
    eval "$(apt-config shell apt_proxy Acquire::http::Proxy 2>/dev/null || true)"
    if [[ -n $apt_proxy && -z ${http_proxy:-} ]]; then export http_proxy=$apt_proxy; fi
    echo "debootstrap --variant=minbase $suite from the apt mirror $mirror ..."
    run debootstrap debootstrap --variant=minbase --arch="$arch" --include="$packages" \
      "$suite" "$rootfs" "$mirror"
    run "cache base" tar -C "$rootfs" --numeric-owner -cf "$base_tar.partial" .
    mv "$base_tar.partial" "$base_tar"
    echo "debootstrap: $(since "$t")s"
  fi

  # 2. JupyterLab in a venv, installed through this machine's pip configuration.
  t=$EPOCHREALTIME
  stage=/tmp/slicehub-build
  mkdir -p "$rootfs$stage"
  cp "$docker_dir/common/requirements.txt" "$docker_dir/common/constraints.txt" "$rootfs$stage/"
  cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf"
  mount -t proc proc "$rootfs/proc"
  mounts+=("$rootfs/proc")

  # The chroot's environment: pip's own variables, proxies and CA bundle variables.
  chroot_env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8)
  while read -r name; do
    [[ $name =~ ^(PIP_[A-Z0-9_]+|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY|REQUESTS_CA_BUNDLE|SSL_CERT_FILE|SSL_CERT_DIR|CURL_CA_BUNDLE)$ ]] &&
      [[ $name != PIP_CONFIG_FILE ]] && chroot_env+=("$name=${!name}")
  done < <(compgen -e)

  # Host files lent to the chroot for the install, taken out again before the image is made.
  lent=()     # paths inside the rootfs to delete afterwards
  restore=()  # paths inside the rootfs whose original is at PATH.slicehub-orig
  lend() { # lend HOST_PATH CHROOT_PATH
    local dst=$rootfs$2
    if [[ -e $dst || -L $dst ]]; then
      mv "$dst" "$dst.slicehub-orig"
      restore+=("$dst")
    else
      lent+=("$dst")
    fi
    mkdir -p "$(dirname "$dst")"
    cp -aL "$1" "$dst"
  }
  # pip's configuration files, at the places pip looks for them as root in the chroot.
  user_conf=${XDG_CONFIG_HOME:-$HOME/.config}/pip/pip.conf
  for pair in /etc/pip.conf:/etc/pip.conf /etc/xdg/pip/pip.conf:/etc/xdg/pip/pip.conf \
    "$user_conf:/root/.config/pip/pip.conf" "$HOME/.pip/pip.conf:/root/.pip/pip.conf"; do
    [[ -f ${pair%%:*} ]] && lend "${pair%%:*}" "${pair#*:}"
  done
  if [[ -n ${PIP_CONFIG_FILE:-} ]]; then
    if [[ -f $PIP_CONFIG_FILE && $PIP_CONFIG_FILE != /dev/null ]]; then
      lend "$PIP_CONFIG_FILE" "$stage/pip.conf"
      chroot_env+=("PIP_CONFIG_FILE=$stage/pip.conf")
    else
      chroot_env+=("PIP_CONFIG_FILE=$PIP_CONFIG_FILE")
    fi
  fi
  # CA bundles and local find-links folders named by the settings, at the same paths.
  pip_settings=$( (python3 -m pip config list || pip config list) 2>/dev/null || true)
  paths=()
  for v in "${PIP_CERT:-}" "${REQUESTS_CA_BUNDLE:-}" "${SSL_CERT_FILE:-}" "${CURL_CA_BUNDLE:-}" "${PIP_FIND_LINKS:-}"; do
    read -ra words <<<"$v"
    paths+=("${words[@]}")
  done
  while IFS= read -r line; do
    [[ $line =~ \.(cert|find-links)=\'(.*)\'$ ]] || continue
    read -ra words <<<"${BASH_REMATCH[2]}"
    paths+=("${words[@]}")
  done <<<"$pip_settings"
  declare -A seen=()
  for p in "${paths[@]}"; do
    p=${p#file://}
    [[ $p == /* && -e $p && -z ${seen[$p]:-} ]] || continue
    seen[$p]=1
    lend "$p" "$p"
  done

  in_chroot() { run "$1" chroot "$rootfs" /usr/bin/env -i "${chroot_env[@]}" /bin/sh -euxc "$2"; }
  in_chroot "pip install" "
    python3 -m venv /opt/venv
    /opt/venv/bin/pip install --no-cache-dir --no-input \
      -c $stage/constraints.txt -r $stage/requirements.txt
    /opt/venv/bin/pip check
    /opt/venv/bin/pip freeze >$stage/freeze.txt
    /opt/venv/bin/jupyter lab --version >$stage/jupyterlab-version.txt"
  jl_version=$(cat "$rootfs$stage/jupyterlab-version.txt")
  want=$(grep -v '^#' "$docker_dir/common/constraints.txt" | tr 'A-Z_' 'a-z-' | sort)
  got=$(tr 'A-Z_' 'a-z-' <"$rootfs$stage/freeze.txt" | sort)
  if [[ $want != "$got" ]]; then
    echo "warning: the venv differs from docker/common/constraints.txt:" >&2
    diff <(echo "$want") <(echo "$got") >&2 || true
  fi

  for p in "${lent[@]}"; do rm -rf "$p"; done
  for p in "${restore[@]}"; do
    rm -rf "$p"
    mv "$p.slicehub-orig" "$p"
  done

  # 3. The user, the entry script, and clean-up.
  install -m 0755 "$docker_dir/common/slicehub-notebook" "$rootfs/usr/local/bin/slicehub-notebook"
  install -D -m 0644 "$docker_dir/common/slicehub_auth.py" "$rootfs/usr/local/lib/slicehub/slicehub_auth.py"
  # No "Jupyter news" prompt and no update check: students cannot act on either, and an
  # offline course would only see the fetch fail.
  install -D -m 0644 "$docker_dir/common/jupyterlab-overrides.json" "$rootfs/opt/venv/share/jupyter/lab/settings/overrides.json"
  echo "pip install jupyterlab $jl_version: $(since "$t")s"
  t=$EPOCHREALTIME
  in_chroot "finish" "
    useradd --uid 1000 --gid 100 --create-home --home-dir /home/jovyan --shell /bin/bash jovyan
    chown -R 1000:100 /opt/venv
    apt-get clean
    rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old /root/.cache /tmp/* /var/tmp/*
    find /var/log -type f -delete
    find / -xdev -type f -perm /6000 -exec chmod ug-s {} +"
  umount "$rootfs/proc"
  mounts=()
  echo "user, entry script, clean-up: $(since "$t")s"
  t=$EPOCHREALTIME
  : >"$rootfs/etc/resolv.conf"
  echo slicehub >"$rootfs/etc/hostname"
  run "pack rootfs" tar -C "$rootfs" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' \
    --exclude='./sys/*' -cf "$final_tar.partial" .
  echo "$jl_version" >"$final_tar.version"
  mv "$final_tar.partial" "$final_tar"
  rm -rf --one-file-system "$rootfs"
  rootfs=
  echo "pack rootfs ($(du -m "$final_tar" | cut -f1) MB): $(since "$t")s"
fi

# 4. The image.
t=$EPOCHREALTIME
jl_version=$(cat "$final_tar.version")
new_id=$(docker import \
  --message "SliceHub JupyterLab $jl_version, recipe $hash" \
  --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV HOME=/home/jovyan' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV SHELL=/bin/bash' \
  --change 'USER 1000:100' \
  --change 'WORKDIR /home/jovyan' \
  --change 'EXPOSE 8888' \
  --change 'LABEL org.slicehub.image=jupyterlab' \
  --change 'LABEL org.slicehub.variant=offline' \
  --change "LABEL org.slicehub.jupyterlab.version=$jl_version" \
  --change "LABEL org.slicehub.recipe=$hash" \
  --change 'ENTRYPOINT ["/usr/bin/tini", "--"]' \
  --change 'CMD ["/usr/local/bin/slicehub-notebook"]' \
  "$final_tar" "$image")
set_alias "$new_id"
echo "docker import: $(since "$t")s"

# Keep only the current caches.
for f in "$cache"/jupyterlab-rootfs-*.tar "$cache"/"$suite"-minbase-*.tar; do
  [[ -e $f && $f != "$final_tar" && $f != "$base_tar" ]] && rm -f "$f" "$f.version"
done

echo "built $image (alias $alias_tag), JupyterLab $jl_version, in $(since "$start")s"
