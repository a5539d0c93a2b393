#!/usr/bin/env bash
# Build slicehub/portal:offline, the portal as a container image, from the Debian package:
# slicehub/debian:offline (debian.sh) with the package installed, nothing else. No registry.
#
# Tags: slicehub/portal:<hash of the package and this script> and the alias
# slicehub/portal:offline. Run it with the host's network, the Docker socket and its group
# (root-equivalent on the host: see docs/operations.md), e.g.
#   docker run -d --name slicehub --network host --cap-add NET_ADMIN \
#     -v /var/run/docker.sock:/var/run/docker.sock --group-add "$(stat -c %g /var/run/docker.sock)" \
#     -v slicehub-data:/var/lib/slicehub slicehub/portal:offline
#
# Usage: docker/offline/portal.sh [PACKAGE.deb]   (default: the newest in target/debian/)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$(dirname "$here")")
repo=slicehub/portal
alias_tag=$repo:offline

die() {
  echo "portal.sh: $*" >&2
  exit 1
}
deb=${1:-$(ls -t "$root"/target/debian/slicehub_*.deb 2>/dev/null | head -n1 || true)}
[[ -n $deb && -f $deb ]] || die "no package: run scripts/package-deb.sh first, or name one"
image_id() { docker image inspect --format '{{.Id}}' "$1" 2>/dev/null; }

hash=$(cat "$here/portal.sh" "$deb" | sha256sum | cut -c1-12)
image=$repo:$hash
if image_id "$image" >/dev/null; then
  docker tag "$image" "$alias_tag"
  echo "cached: $image (alias $alias_tag)"
  exit 0
fi
"$here/debian.sh" >/dev/null

builder=slicehub-portal-build-$$
trap 'docker rm -f "$builder" >/dev/null 2>&1 || true' EXIT
docker run -d --name "$builder" slicehub/debian:offline sleep infinity >/dev/null
docker cp "$deb" "$builder:/tmp/slicehub.deb"
docker exec -e DEBIAN_FRONTEND=noninteractive "$builder" sh -ec '
  apt-get install -y -qq --no-install-recommends /tmp/slicehub.deb >/dev/null
  rm -f /tmp/slicehub.deb
  rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log' \
  || die "installing $(basename "$deb") failed"
docker stop -t 1 "$builder" >/dev/null
docker commit \
  --change 'WORKDIR /var/lib/slicehub' \
  --change 'VOLUME /var/lib/slicehub' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV SLICEHUB_CONFIG=/etc/slicehub/slicehub.toml' \
  --change "LABEL org.slicehub.recipe=$hash" \
  --change 'ENTRYPOINT ["/usr/lib/slicehub/container-entrypoint"]' \
  --change 'CMD ["serve"]' \
  "$builder" "$image" >/dev/null
docker tag "$image" "$alias_tag"
# Each package builds a new image: keep only this one.
docker images "$repo" --format '{{.Repository}}:{{.Tag}}' | grep -v -e ":$hash\$" -e ':offline$' \
  | xargs -r docker rmi >/dev/null 2>&1 || true
echo "built: $image (alias $alias_tag) from $(basename "$deb")"
