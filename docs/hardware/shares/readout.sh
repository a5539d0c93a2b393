#!/usr/bin/env bash
# Read-only readout for GPUs split into shares, for docs/hardware/shares/: the GPU as
# `slicehub gpu inspect` lists it split into 4 MPS shares, the per-process memory and
# activity it reads from NVML process samples with two PyTorch processes of different
# loads, and, where the driver's MPS control program is installed, one MPS control daemon
# run as this user with its own pipe directory, with two clients capped at 2 GiB and at
# 25% of the multiprocessors. Changes no GPU setting (no compute mode, no MIG mode, no
# reset); the daemon is quit at the end. Usage: readout.sh SLICEHUB_BINARY OUT_DIR
set -uo pipefail
bin=$1
out=$2
mkdir -p "$out"
export SLICEHUB_DATA_DIR=$(mktemp -d) SLICEHUB_GPU_BACKEND=nvml RUST_LOG=warn SLICEHUB_GPU_SHARES="0 = 4 mps"

nvidia-smi --query-gpu=index,name,uuid,memory.total,mig.mode.current,compute_mode,driver_version --format=csv >"$out/nvidia-smi.csv"
"$bin" gpu inspect >"$out/inspect.txt" 2>&1
"$bin" gpu inspect --activity 3 >"$out/activity-idle.txt" 2>&1

# Two processes: one busy (matrix products), one holding memory and mostly waiting.
load() {
python3 - "$1" "$2" <<'PY'
import sys, time, torch
busy, seconds = sys.argv[1] == "busy", float(sys.argv[2])
hold = torch.empty(int(1.5 * 2**30), dtype=torch.uint8, device="cuda")
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end, n = time.time() + seconds, 0
while time.time() < end:
    if busy:
        a = (a @ a).clamp_(-1, 1)
    else:
        time.sleep(0.2)
    n += 1
torch.cuda.synchronize()
print(f"pid={__import__('os').getpid()} busy={busy} iterations={n}")
PY
}
load busy 25 >"$out/load-busy.txt" 2>&1 &
busy=$!
load idle 25 >"$out/load-idle.txt" 2>&1 &
idle=$!
sleep 10
"$bin" gpu inspect --activity 5 >"$out/activity-load.txt" 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv >"$out/compute-apps-load.csv"
echo "busy=$busy idle=$idle" >"$out/pids.txt"
wait "$busy" "$idle"
sleep 2
"$bin" gpu inspect --activity 3 >"$out/activity-after.txt" 2>&1

# The portal itself (no Docker here), for the DCGM-style labels /metrics gives real GPUs.
(
    export SLICEHUB_DATA_DIR=$(mktemp -d) SLICEHUB_SERVER_BIND=127.0.0.1:3999 SLICEHUB_ADMIN_PASSWORD=readout-password-1
    export SLICEHUB_METRICS_TOKEN=readout-metrics-token-0123456789 SLICEHUB_SESSIONS_SAMPLE_SECONDS=1
    export SLICEHUB_SESSIONS_HOST_FIREWALL=false SLICEHUB_DOCKER_HOST=unix:///nonexistent.sock
    "$bin" serve >"$out/serve.log" 2>&1 &
    serve=$!
    for _ in $(seq 1 40); do curl -fs http://127.0.0.1:3999/healthz >/dev/null 2>&1 && break; sleep 0.5; done
    sleep 3
    curl -s -H "Authorization: Bearer $SLICEHUB_METRICS_TOKEN" http://127.0.0.1:3999/metrics | grep -E '^slicehub_gpu' >"$out/metrics.txt" 2>&1
    kill "$serve"; wait "$serve" 2>/dev/null
)

# MPS, only if the driver's control program is here; as this user, own directories.
if ! command -v nvidia-cuda-mps-control >/dev/null; then
    echo "nvidia-cuda-mps-control not installed here" >"$out/mps.txt"
    exit 0
fi
mps=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
{
    echo "daemon: $(nvidia-cuda-mps-control -d 2>&1; echo rc=$?)"
    python3 - <<'PY' 2>&1
import os, subprocess, sys
client = r'''
import os, time, torch
torch.cuda.init()
out = []
for gib in (1, 3):
    try:
        x = torch.empty(gib * 2**30, dtype=torch.uint8, device="cuda")
        out.append(f"{gib} GiB: allocated")
        del x
    except Exception as e:
        out.append(f"{gib} GiB: refused ({type(e).__name__})")
torch.cuda.empty_cache()
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    a = (a @ a).clamp_(-1, 1)
torch.cuda.synchronize()
t = time.time(); n = 0
while time.time() - t < 5:
    a = (a @ a).clamp_(-1, 1); n += 1
torch.cuda.synchronize()
print(f"limit={os.environ.get('CUDA_MPS_PINNED_DEVICE_MEM_LIMIT')} threads={os.environ.get('CUDA_MPS_ACTIVE_THREAD_PERCENTAGE')} " + "; ".join(out) + f"; matmuls in 5 s={n}")
'''
for env in ({}, {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "0=2G"}, {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "25"}):
    r = subprocess.run([sys.executable, "-c", client], env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
    print(r.stdout.strip() or r.stderr.strip()[-400:])
PY
    # Two clients of the daemon at once, one busy and one waiting: what NVML's process
    # samples say of MPS clients (each session's share is told apart by its processes).
    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 load busy 20 >"$out/mps-load-busy.txt" 2>&1 &
    mbusy=$!
    CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4G load idle 20 >"$out/mps-load-idle.txt" 2>&1 &
    midle=$!
    sleep 9
    "$bin" gpu inspect --activity 5 >"$out/mps-activity-load.txt" 2>&1
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv >"$out/mps-compute-apps.csv" 2>&1
    wait "$mbusy" "$midle"
    echo "server list: $(echo get_server_list | nvidia-cuda-mps-control 2>&1)"
    echo "quit: $(echo quit | nvidia-cuda-mps-control 2>&1; echo rc=$?)"
    sleep 2
    echo "log:"; tail -n 20 "$CUDA_MPS_LOG_DIRECTORY"/control.log 2>&1
} >"$out/mps.txt" 2>&1
nvidia-smi --query-gpu=compute_mode,mig.mode.current --format=csv >"$out/after-settings.csv"
