#!/usr/bin/env bash
# The executor's CUDA backend on a GPU machine, in one call: builds the
# wrapir tool, the CUDA tests and executor_overhead_bench (Release, sm_90),
# runs the GPU tests, runs every export of EXPORTS through
# `wrapir run --device cuda` (as exported and arena-planned) against eager's
# outputs saved beside it, then the host-overhead benchmark.
#
#   bench/gpu/run_executor_gpu.sh EXPORTS [RESULTS_DIR] [--no-bench]
#
# EXPORTS/NAME are exports of `wrapir_inductor check --device cuda`
# (program.json, kernels.json, kernels/, inputs.safetensors,
# outputs.safetensors, inductor_module.py). RESULTS_DIR defaults to $OUT.
set -u -o pipefail
cd "$(dirname "$0")/../.."
exports=$(realpath "$1")
results=${2:-${OUT:-build/gpu-exec/results}}
bench=1
[ "${3:-}" = "--no-bench" ] && bench=0
mkdir -p "$results"
log="$results/executor_gpu.log"
: >"$log"
step() { printf '== %s\n' "$*" | tee -a "$log"; }

step "tree: $(git rev-parse --abbrev-ref HEAD 2>/dev/null) $(git rev-parse --short HEAD 2>/dev/null); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
export WRAPIR_CUBLAS=${WRAPIR_CUBLAS:-$(python3 - <<'EOF'
import glob, os, torch
root = os.path.dirname(torch.__file__)
found = sorted(glob.glob(f"{root}/../nvidia/**/libcublas.so*", recursive=True) + glob.glob(f"{root}/lib/libcublas.so*"))
print(found[-1] if found else "")
EOF
)}
step "cuBLAS: $WRAPIR_CUBLAS"

step "configure and build"
(cmake -S . -B build/gpu-exec -G Ninja -DCMAKE_BUILD_TYPE=Release -DWRAPIR_ENABLE_CUDA=ON -DWRAPIR_BUILD_TESTS=ON \
   -DWRAPIR_BUILD_BENCHMARKS=ON -DWRAPIR_BUILD_EXAMPLES=OFF -DWRAPIR_BUILD_TOOLS=OFF -DWRAPIR_BUILD_FUZZERS=OFF \
   -DWRAPIR_GPU_ONLY=ON -DCMAKE_CUDA_ARCHITECTURES=90 >>"$log" 2>&1 &&
 cmake --build build/gpu-exec -j "$(nproc)" --target executor_test cuda_host_tests executor_overhead_bench >>"$log" 2>&1) &
gpu_build=$!
(cmake -S . -B build/gpu-tools -G Ninja -DCMAKE_BUILD_TYPE=Release -DWRAPIR_BUILD_TOOLS=ON -DWRAPIR_BUILD_TESTS=OFF \
   -DWRAPIR_BUILD_BENCHMARKS=OFF -DWRAPIR_BUILD_EXAMPLES=OFF -DWRAPIR_BUILD_FUZZERS=OFF >>"$results/tool_build.log" 2>&1 &&
 cmake --build build/gpu-tools -j "$(nproc)" --target wrapir_tool >>"$results/tool_build.log" 2>&1)
tool_status=$?
wait $gpu_build
gpu_status=$?
[ $tool_status -eq 0 ] || { step "tool build FAILED"; grep -E 'error' "$results/tool_build.log" | head -30; }
[ $gpu_status -eq 0 ] || { step "test/bench build FAILED"; grep -E 'error' "$log" | head -30; }
tool=build/gpu-tools/tools/wrapir/wrapir

step "GPU tests"
ctest --test-dir build/gpu-exec -R '^(gpu\.executor_test|unit\.cuda\.)' --output-on-failure --timeout 300 2>&1 | tee -a "$log" | tail -15

step "corpus through wrapir run --device cuda"
python3 - "$tool" "$exports" "$results" <<'EOF' 2>&1 | tee -a "$log"
import json, subprocess, sys, time
from pathlib import Path
import torch
from safetensors.torch import load_file
tool, exports, results = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
rows = []
for d in sorted(p for p in exports.iterdir() if (p / "program.json").is_file()):
    cells = [d.name]
    for prog in ("program.json", "program.arena.json"):
        if not (d / prog).is_file():
            cells.append("-"); continue
        out = Path("/tmp") / f"{d.name}.{prog}.out.safetensors"
        t0 = time.time()
        r = subprocess.run([tool, "run", str(d / prog), "--inputs", str(d / "inputs.safetensors"), "--device", "cuda",
                            "--kernels", str(d), "-o", str(out)], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            cells.append("FAIL: " + " ".join((r.stderr or r.stdout).split())[:300]); continue
        got, want = load_file(str(out)), load_file(str(d / "outputs.safetensors"))
        worst, why = 0.0, ""
        for k, w in want.items():
            g = got.get(k)
            if g is None: why = f"no {k}"; break
            if g.dtype != w.dtype or g.shape != w.shape: why = f"{k}: {g.dtype}{list(g.shape)} vs {w.dtype}{list(w.shape)}"; break
            if w.numel():
                worst = max(worst, float((g.double() - w.double()).abs().max()) if w.is_floating_point() else float((g != w).any()))
            tol = 1e-2 if w.dtype in (torch.bfloat16, torch.float16) else 1e-4
            if not torch.allclose(g.double(), w.double(), rtol=tol, atol=tol, equal_nan=True): why = f"{k} differs"; break
        cells.append(f"FAIL: {why}" if why else f"ok {worst:.2g}")
    rows.append(cells)
    print(" | ".join(cells), flush=True)
text = "| model | executor | executor+arena |\n|---|---|---|\n" + "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n"
(results / "executor_corpus.md").write_text(text)
print(text)
print(f"passed: {sum(all(c.startswith('ok') or c == '-' for c in r[1:]) for r in rows)} of {len(rows)}")
EOF

if [ $bench -eq 1 ]; then
  step "host-overhead benchmark"
  PYTHONPATH="$PWD/tools/inductor" python3 bench/gpu/executor_overhead.py --exports "$exports" \
    --bench build/gpu-exec/bench/executor_overhead_bench --out "$results/executor_overhead.md" 2>&1 | tee -a "$log"
fi
step "done"
