#!/usr/bin/env bash
# Runs docs/deploy/nginx.conf for real on this machine, in front of a fresh SliceHub: TLS with
# a self-signed certificate for gpu.example.edu and *.example-notebooks.net (on 127.0.0.1:8443,
# names resolved by curl --resolve), then signs in, starts a notebook, walks through the
# door to its own host, loads JupyterLab and opens a WebSocket there, all through nginx.
# Needs nginx (apt-get install nginx-light), openssl, curl, Docker with
# slicehub/jupyterlab:offline, and a built target/debug/slicehub.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
work=$(mktemp -d)
portal_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) "${portal_pid:-}" 2>/dev/null || true; [[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=gpu.example.edu \
  -addext "subjectAltName=DNS:gpu.example.edu,DNS:*.example-notebooks.net" \
  -keyout "$work/privkey.pem" -out "$work/fullchain.pem" 2>/dev/null
sed -e "s#listen 443 ssl#listen 127.0.0.1:8443 ssl#; s#listen 80;#listen 127.0.0.1:8080;#" \
    -e "s#/etc/ssl/slicehub#$work#; s#127.0.0.1:3000#127.0.0.1:$portal_port#" \
    docs/deploy/nginx.conf >"$work/slicehub.conf"
cat >"$work/nginx.conf" <<CONF
pid $work/nginx.pid;
error_log $work/error.log;
events {}
http { access_log $work/access.log; include $work/slicehub.conf; }
CONF
nginx -p "$work" -c "$work/nginx.conf"

SLICEHUB_DATA_DIR=$work/data SLICEHUB_SERVER_BIND=127.0.0.1:$portal_port \
SLICEHUB_SERVER_PUBLIC_URL=https://gpu.example.edu:8443 \
SLICEHUB_SERVER_NOTEBOOK_DOMAIN=example-notebooks.net SLICEHUB_SERVER_SECURE_COOKIES=true \
SLICEHUB_SERVER_TRUSTED_PROXIES=127.0.0.1 SLICEHUB_ADMIN_PASSWORD=try-nginx-password \
SLICEHUB_GPU_BACKEND=simulated SLICEHUB_GPU_SIMULATED="1 x H100-80GB" \
  target/debug/slicehub serve >"$work/portal.log" 2>&1 &
portal_pid=$!
portal=https://gpu.example.edu:8443
curl_() { curl -sk --resolve "gpu.example.edu:8443:127.0.0.1" --resolve "$nb_host:8443:127.0.0.1" "$@"; }
nb_host=none.example-notebooks.net
for _ in $(seq 100); do curl_ -f -o /dev/null "$portal/healthz" && break; sleep 0.2; done
SLICEHUB_DATA_DIR=$work/data target/debug/slicehub course add CS-101 "Deep Learning" >/dev/null

cookie=$(curl_ -D - -o /dev/null -H "origin: $portal" -d "username=admin&password=try-nginx-password" \
  "$portal/api/login" | tr -d '\r' | sed -n 's/^set-cookie: \(__Host-slicehub_session=[^;]*\);.*Secure.*/\1/ip')
[[ -n $cookie ]] && echo "PASS signed in through nginx: ${cookie%%=*} (Secure, host-only)"
started=$(curl_ -H "origin: $portal" -b "$cookie" \
  -d "course_id=1&profile=1g.10gb&image=slicehub%2Fjupyterlab%3Aoffline" "$portal/api/start_session")
id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$started") ||
  { echo "FAIL start_session answered: $started"; exit 1; }
for _ in $(seq 300); do
  state=$(curl_ -H "origin: $portal" -b "$cookie" -X POST "$portal/api/my_sessions" |
    python3 -c "import json,sys; print([s['state'] for s in json.load(sys.stdin) if s['id']=='$id'][0])")
  [[ $state == ready ]] && break; sleep 0.5
done
if [[ $state != ready ]]; then
  echo "FAIL notebook $id is $state"; grep -iE "session|error|warn" "$work/portal.log" | tail -5; exit 1
fi
echo "PASS notebook $id is $state"
nb_host=$id.example-notebooks.net
# The door sends the browser to the notebook host, which sets its launch nonce and sends it
# back to the door for a ticket bound to that nonce; the ticket and the nonce buy the grant.
there=$(curl_ -o /dev/null -w '%{redirect_url}' -b "$cookie" "$portal/user/admin/$id/lab")
[[ $there == https://$nb_host:8443/* ]] && echo "PASS the door sends to https://$nb_host:8443"
back=$(curl_ -o /dev/null -w '%{redirect_url}' -c "$work/nb.jar" "$there")
launch=$(curl_ -o /dev/null -w '%{redirect_url}' -b "$cookie" "$back")
grant=$(curl_ -D - -o /dev/null -b "$work/nb.jar" "$launch" | tr -d '\r' |
  sed -n 's/^set-cookie: \(__Host-slicehub_notebook=[^;]*\);.*Secure.*/\1/ip')
[[ -n $grant ]] && echo "PASS the notebook host set ${grant%%=*} (Secure, host-only)"
status=$(curl_ -o "$work/lab.html" -w '%{http_code}' -b "$grant" "https://$nb_host:8443/user/admin/$id/lab")
grep -q JupyterLab "$work/lab.html" && echo "PASS JupyterLab answers on its own host through nginx ($status)"
upgrade=$(curl_ -i -N --http1.1 --max-time 3 -b "$grant" -H "Origin: https://$nb_host:8443" \
  -H "Connection: Upgrade" -H "Upgrade: websocket" -H "Sec-WebSocket-Version: 13" \
  -H "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" \
  "https://$nb_host:8443/user/admin/$id/api/events/subscribe" 2>/dev/null | head -n1 | tr -d '\r' || true)
[[ $upgrade == *101* ]] && echo "PASS WebSocket through nginx: $upgrade"
curl_ -o /dev/null -H "origin: $portal" -H "x-forwarded-for: 203.0.113.9" -d "username=admin&password=wrong" "$portal/api/login"
sleep 0.5
sqlite_addr=$(python3 - "$work/data/slicehub.db" <<'PY'
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute(
    "SELECT detail FROM audit_log WHERE action='login.failure' ORDER BY id DESC LIMIT 1").fetchone()
print(row[0] if row else "")
PY
)
[[ $sqlite_addr == 127.0.0.1 ]] &&
  echo "PASS a failed login with a forged X-Forwarded-For is recorded under the client's real address: $sqlite_addr"
curl_ -o /dev/null -H "origin: $portal" -b "$cookie" -d "id=$id" "$portal/api/stop_session"
