#!/usr/bin/env bash
# SliceHub's test Slurm cluster: one controller (slurmctld + slurmrestd on :6820) and two
# compute nodes with MIG-typed GPU GRES, node 1 also two L40S-typed GPUs and 8 shards
# (docker/slurm/slurm.conf, gres.conf), as containers of slicehub/slurm
# (docker/offline/slurm.sh) on the private Docker network slicehub-slurm. The configuration
# is part of the image: a cluster running an image of an older configuration is replaced.
#
#   scripts/slurm-cluster.sh [up]   start it (or keep the running one), print the
#                                   SLICEHUB_SLURM_* settings a portal needs, one per line
#                                   (with the cluster's JWT key: each student's jobs run as
#                                   their own user, who must exist on every host)
#   scripts/slurm-cluster.sh down   remove the containers and the network
#
# Idempotent: a cluster already running from the current image is kept (its down nodes are
# resumed and its jobs left alone); one from an older image is replaced. The munge and JWT
# keys are made once under target/slurm-cluster/keys.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

network=slicehub-slurm
subnet=10.87.0.0/24
controller=slurmctl
nodes=(slurmnode1 slurmnode2)
declare -A address=([slurmctl]=10.87.0.10 [slurmnode1]=10.87.0.11 [slurmnode2]=10.87.0.12)
job_user=jovyan
url=http://${address[$controller]}:6820

die() { echo "slurm-cluster.sh: $*" >&2; exit 1; }

down() {
  docker rm -f "$controller" "${nodes[@]}" >/dev/null 2>&1 || true
  docker network rm "$network" >/dev/null 2>&1 || true
}

case ${1:-up} in
  up) ;;
  down) down; exit 0 ;;
  *) die "usage: $0 [up|down]" ;;
esac

docker/offline/slurm.sh >&2
image=$(docker/offline/slurm.sh --print-tag)

keys=$PWD/target/slurm-cluster/keys
if [[ ! -f $keys/munge.key || ! -f $keys/jwt_hs256.key ]]; then
  mkdir -p "$keys"
  head -c 1024 /dev/urandom >"$keys/munge.key"
  head -c 32 /dev/urandom >"$keys/jwt_hs256.key"
fi

# Kept only if every host runs the current image with these very keys (keys made again at
# the same path, after target/ was removed, would not match a running cluster's).
keys_id=$(cat "$keys/munge.key" "$keys/jwt_hs256.key" | sha256sum | cut -c1-16)
running_as() { docker inspect --format '{{.Config.Image}} {{.State.Running}} {{index .Config.Labels "org.slicehub.slurm-keys"}}' "$1" 2>/dev/null || true; }
fresh=0
for host in "$controller" "${nodes[@]}"; do
  [[ $(running_as "$host") == "$image true $keys_id" ]] || fresh=1
done
if [[ $fresh == 1 ]]; then
  down
  docker network create --subnet "$subnet" --label org.slicehub.slurm-cluster=true "$network" >/dev/null
  start() { # start HOST ROLE
    docker run -d --name "$1" --hostname "$1" --network "$network" --ip "${address[$1]}" \
      --label org.slicehub.slurm-cluster=true --label org.slicehub.slurm-keys="$keys_id" \
      -v "$keys:/keys:ro" "$image" "$2" >/dev/null
  }
  start "$controller" controller
  for node in "${nodes[@]}"; do start "$node" node; done
fi

ctl() { docker exec "$controller" "$@"; }
for _ in $(seq 1 150); do
  states=$(ctl sinfo -h -N -o '%N %T' 2>/dev/null | sort -u || true)
  if [[ $(grep -c -E ' (idle|mixed|allocated)$' <<<"$states") == "${#nodes[@]}" ]]; then break; fi
  # Nodes a test took down come back; a node that registered late is resumed too.
  if grep -q -E ' (down|drained|draining)' <<<"$states"; then
    ctl scontrol update nodename="$(IFS=,; echo "${nodes[*]}")" state=resume >/dev/null 2>&1 || true
  fi
  sleep 0.2
done
[[ $(grep -c -E ' (idle|mixed|allocated)$' <<<"$states") == "${#nodes[@]}" ]] ||
  die "the nodes did not come up: $states (docker logs $controller)"

token=$(ctl scontrol token username="$job_user" lifespan=604800 | sed -n 's/^SLURM_JWT=//p')
[[ -n $token ]] || die "no JWT from scontrol token"
for _ in $(seq 1 100); do
  curl -fs -H "X-SLURM-USER-NAME: $job_user" -H "X-SLURM-USER-TOKEN: $token" "$url/slurm/v0.0.38/ping" >/dev/null && break
  sleep 0.2
done
curl -fs -H "X-SLURM-USER-NAME: $job_user" -H "X-SLURM-USER-TOKEN: $token" "$url/slurm/v0.0.38/ping" >/dev/null ||
  die "slurmrestd does not answer at $url"

echo "SLICEHUB_SLURM_URL=$url"
echo "SLICEHUB_SLURM_USER=$job_user"
echo "SLICEHUB_SLURM_TOKEN=$token"
echo "SLICEHUB_SLURM_PARTITION=gpu"
echo "SLICEHUB_SLURM_JWT_KEY_FILE=$keys/jwt_hs256.key"
