#!/usr/bin/env bash
# Check a SliceHub JupyterLab image against the env contract, under the launcher's limits:
# the token's hash and the base URL from the environment (as SliceHub starts it: only the
# token with that hash is admitted), port 8888 published on loopback, user 1000:100, a
# working kernel. Removes its container however it ends.
#
# Usage: docker/offline/smoke-test.sh [IMAGE]     (default slicehub/jupyterlab:offline)
set -euo pipefail

image=${1:-slicehub/jupyterlab:offline}
token=smoke$RANDOM$RANDOM$RANDOM
token_sha256=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
base=/user/alice/s1/

fail() {
  echo "FAIL: $*" >&2
  [[ -n ${cid:-} ]] && docker logs --tail 30 "$cid" >&2 2>&1
  exit 1
}
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

start=$EPOCHREALTIME
cid=$(docker run -d --rm -p 127.0.0.1:0:8888 \
  -e SLICEHUB_TOKEN_SHA256="$token_sha256" -e SLICEHUB_BASE_URL="$base" \
  --cap-drop ALL --security-opt no-new-privileges --pids-limit 256 --memory 2g \
  --label org.slicehub.smoke-test=1 "$image")
trap 'docker rm -f "$cid" >/dev/null 2>&1 || true' EXIT
port=$(docker port "$cid" 8888/tcp | head -n 1)
port=${port##*:}
url=http://127.0.0.1:$port${base%/}
echo "container ${cid:0:12} on 127.0.0.1:$port"

# Readiness: /api/status answers JSON.
status=
for ((i = 0; i < 300; i++)); do
  status=$(curl -s -m 2 "$url/api/status?token=$token" || true)
  [[ $status == \{* ]] && break
  [[ $(docker inspect -f '{{.State.Running}}' "$cid" 2>/dev/null) == true ]] || fail "the container stopped"
  sleep 0.2
done
[[ $status == \{* ]] || fail "no JSON from $url/api/status within 60 s"
echo "ready in $(since "$start")s: $status"

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
c=$(code "$url/api/status")
[[ $c == 403 || $c == 401 ]] || fail "without the token /api/status answered $c"
echo "without the token: $c"
c=$(code "$url/api/status?token=wrong$token")
[[ $c == 403 || $c == 401 ]] || fail "with a wrong token /api/status answered $c"
echo "with a wrong token: $c"
c=$(code "$url/lab?token=$token")
[[ $c == 200 ]] || fail "$url/lab answered $c"
echo "the JupyterLab page under $base: $c"

who=$(docker exec "$cid" id)
[[ $who == "uid=1000(jovyan) gid=100(users)"* ]] || fail "runs as $who"
home=$(docker exec "$cid" sh -c 'echo "$HOME $(pwd)"; touch "$HOME/.write-test" && echo writable')
[[ $home == "/home/jovyan /home/jovyan"*writable ]] || fail "home: $home"
docker exec "$cid" sh -c 'touch /opt/venv/.write-test && rm /opt/venv/.write-test' || fail "/opt/venv is not writable"
echo "user: $who; home /home/jovyan and /opt/venv writable"
args=$(docker top "$cid" -eo pid,args) || fail "docker top failed"
[[ $args == *slicehub-notebook* && $args == *jupyter-lab* ]] || fail "unexpected processes: $args"
[[ $args != *"$token"* ]] || fail "the token is on a command line: $args"
env=$(docker exec "$cid" sh -c 'for p in /proc/[0-9]*; do tr "\0" "\n" < "$p/environ"; done 2>/dev/null')
[[ $env == *"SLICEHUB_TOKEN_SHA256=$token_sha256"* ]] || fail "the processes do not carry the token's hash"
[[ $env != *"$token"* ]] || fail "the token is in a process's environment"
echo "the token is on no command line and in no environment"

# A kernel: created (201), then it runs code sent through the server's websocket (the path a
# browser takes, with the client inside the container, which has websocket-client).
kernel=$(curl -s -w '\n%{http_code}' -X POST -H 'Content-Type: application/json' -d '{"name":"python3"}' \
  "$url/api/kernels?token=$token")
[[ ${kernel##*$'\n'} == 201 ]] || fail "POST /api/kernels: $kernel"
kernel=${kernel%$'\n'*}
id=$(echo "$kernel" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
[[ -n $id ]] || fail "no kernel id in $kernel"
echo "kernel $id created: 201"
client=$(
  cat <<'PY'
import json, os, sys, uuid
import websocket  # websocket-client, a JupyterLab dependency

kernel_id = sys.argv[1]
url = "ws://127.0.0.1:8888%sapi/kernels/%s/channels?token=%s" % (
    os.environ["SLICEHUB_BASE_URL"], kernel_id, sys.argv[2])
ws = websocket.create_connection(url, timeout=60)
msg_id = uuid.uuid4().hex
ws.send(json.dumps({
    "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "smoke",
               "session": uuid.uuid4().hex, "version": "5.3", "date": ""},
    "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
    "content": {"code": "import os; print(6 * 7, os.getuid())", "silent": False,
                "store_history": False, "user_expressions": {}, "allow_stdin": False},
}))
out = ""
while True:
    msg = json.loads(ws.recv())
    if msg.get("parent_header", {}).get("msg_id") != msg_id:
        continue
    if msg["msg_type"] == "stream":
        out += msg["content"]["text"]
    elif msg["msg_type"] == "error":
        sys.exit("error: %s" % msg["content"])
    elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
        break
print(out.strip())
PY
)
t=$EPOCHREALTIME
out=$(docker exec -i "$cid" python - "$id" "$token" <<<"$client" 2>&1) || fail "running code in kernel $id: $out"
[[ $out == "42 1000" ]] || fail "kernel $id printed '$out', not '42 1000'"
echo "kernel $id ran print(6 * 7, os.getuid()) -> $out in $(since "$t")s"
c=$(code -X DELETE "$url/api/kernels/$id?token=$token")
[[ $c == 204 ]] || fail "DELETE kernel answered $c"
echo "kernel shut down: $c"

echo "PASS $image"
