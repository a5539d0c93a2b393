#!/usr/bin/env bash
# Read-only readout of a GPU used whole (MIG off), for docs/hardware/whole-gpu/: what
# nvidia-smi and PyTorch say, what `slicehub gpu inspect` and `slicehub check` read through
# NVML, and the whole-GPU activity and memory the sampler reads idle and under a PyTorch
# load. Changes no GPU setting. Usage: readout.sh SLICEHUB_BINARY OUT_DIR
set -uo pipefail
bin=$1
out=$2
mkdir -p "$out"
export SLICEHUB_DATA_DIR=$(mktemp -d) SLICEHUB_GPU_BACKEND=nvml RUST_LOG=warn

nvidia-smi --query-gpu=index,name,uuid,memory.total,mig.mode.current,driver_version --format=csv >"$out/nvidia-smi.csv"
python3 - >"$out/torch.txt" <<'PY'
import torch
p = torch.cuda.get_device_properties(0)
print(f"name={p.name} multi_processor_count={p.multi_processor_count} total_memory_mib={p.total_memory // (1024 * 1024)}")
PY
"$bin" gpu inspect >"$out/inspect.txt" 2>&1
"$bin" gpu inspect --json >"$out/inspect.json" 2>&1
"$bin" check >"$out/check.txt" 2>&1
"$bin" gpu inspect --activity 5 >"$out/activity-idle.txt" 2>&1

python3 - >"$out/load.txt" 2>&1 <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 25
n = 0
while time.time() < end:
    a = (a @ a).clamp_(-1, 1)
    n += 1
torch.cuda.synchronize()
print(f"matmuls={n}")
PY
load=$!
sleep 8
"$bin" gpu inspect --activity 5 >"$out/activity-load.txt" 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv >"$out/compute-apps-load.csv"
wait "$load"
sleep 3
"$bin" gpu inspect --activity 5 >"$out/activity-after.txt" 2>&1
