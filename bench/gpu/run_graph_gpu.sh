#!/usr/bin/env bash
# Graph mode and launch overhead of the CUDA executor on a GPU machine, in
# one call (issue 14 §3, §5): builds the GPU tests, executor_overhead_bench
# and the wrapir tool (Release, sm_90) while it exports MODELS with
# `wrapir_inductor export --device cuda`; runs the GPU tests; runs each
# export through `wrapir run --device cuda --graph --repeat 20` against
# eager's outputs; then the host-overhead table (Inductor's call(), the
# executor, graph mode, reduce-overhead, raw launches) and, where `perf` is
# installed, a profile of the executor's calls. Every phase has a time
# limit so that what finished comes back.
#
#   bench/gpu/run_graph_gpu.sh [RESULTS_DIR]     # MODELS, BENCH=0|1, PERF=0|1 from the environment
set -u -o pipefail
cd "$(dirname "$0")/../.."
R=${1:-${OUT:-build/gpu-graph/results}}
mkdir -p "$R"
T0=$SECONDS
say() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$R/graph_gpu.log"; }
say "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(date -u +%F)"
export WRAPIR_CUBLAS=${WRAPIR_CUBLAS:-$(ls /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13 2>/dev/null)}
say "cuBLAS: $WRAPIR_CUBLAS"
MODELS=${MODELS:-deep_mlp mlp_layernorm_gelu rnn_unrolled add_relu}
EXPORTS=build/gpu-graph/exports
B=build/gpu-graph/logs   # build and export logs: their errors go to graph_gpu.log
mkdir -p "$EXPORTS" "$B"

(cmake -S . -B build/gpu-exec -G Ninja -DCMAKE_BUILD_TYPE=Release -DWRAPIR_ENABLE_CUDA=ON -DWRAPIR_BUILD_TESTS=ON \
   -DWRAPIR_BUILD_BENCHMARKS=ON -DWRAPIR_BUILD_EXAMPLES=OFF -DWRAPIR_BUILD_TOOLS=OFF -DWRAPIR_BUILD_FUZZERS=OFF \
   -DWRAPIR_GPU_ONLY=ON -DCMAKE_CUDA_ARCHITECTURES=90 > "$B/gpu_build.log" 2>&1 &&
 cmake --build build/gpu-exec -j 8 --target executor_test cuda_host_tests executor_overhead_bench >> "$B/gpu_build.log" 2>&1
 echo "gpu build exit $?" >> "$B/gpu_build.log") &
gpu_pid=$!
(cmake -S . -B build/gpu-tools -G Ninja -DCMAKE_BUILD_TYPE=Release -DWRAPIR_BUILD_TOOLS=ON -DWRAPIR_BUILD_TESTS=OFF \
   -DWRAPIR_BUILD_BENCHMARKS=OFF -DWRAPIR_BUILD_EXAMPLES=OFF -DWRAPIR_BUILD_FUZZERS=OFF > "$B/tool_build.log" 2>&1 &&
 cmake --build build/gpu-tools -j 6 --target wrapir_tool >> "$B/tool_build.log" 2>&1
 echo "tool build exit $?" >> "$B/tool_build.log") &
tool_pid=$!
if [ -d "${OLD_TREE:-/nonexistent}" ]; then  # a baseline tree: its executor_overhead_bench, built side by side
  (cmake -S "$OLD_TREE" -B build/gpu-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DWRAPIR_ENABLE_CUDA=ON -DWRAPIR_BUILD_TESTS=OFF \
     -DWRAPIR_BUILD_BENCHMARKS=ON -DWRAPIR_BUILD_EXAMPLES=OFF -DWRAPIR_BUILD_TOOLS=OFF -DWRAPIR_BUILD_FUZZERS=OFF \
     -DWRAPIR_GPU_ONLY=ON -DCMAKE_CUDA_ARCHITECTURES=90 > "$B/old_build.log" 2>&1 &&
   cmake --build build/gpu-old -j 3 --target executor_overhead_bench >> "$B/old_build.log" 2>&1
   echo "old build exit $?" >> "$B/old_build.log") &
fi
for m in $MODELS; do
  (PYTHONPATH="$PWD/tools/inductor" timeout ${EXPORT_S:-150} python3 -m wrapir_inductor export "tests/models/$m.py:model" \
     --device cuda --out "$EXPORTS/$m" > "$B/export_$m.log" 2>&1; echo "export $m exit $?" >> "$B/export_$m.log") &
done
wait $gpu_pid; say "$(tail -1 "$B/gpu_build.log")"; grep -E "error" "$B/gpu_build.log" | head -20 | tee -a "$R/graph_gpu.log"
wait $tool_pid; say "$(tail -1 "$B/tool_build.log")"; grep -E "error" "$B/tool_build.log" | head -20 | tee -a "$R/graph_gpu.log"
wait; for m in $MODELS; do tail -2 "$B/export_$m.log" | tee -a "$R/graph_gpu.log"; done

say "GPU tests"
timeout 60 ctest --test-dir build/gpu-exec -R '^(gpu\.executor_test|unit\.cuda\.)' --output-on-failure --timeout 50 > "$R/gpu_tests.log" 2>&1
say "GPU tests exit $?"; grep -E "tests passed|Passed|Failed|Skipped|Not Run" "$R/gpu_tests.log" | tail -24 | tee -a "$R/graph_gpu.log"
timeout 30 "$(find build/gpu-exec -name executor_test -type f -perm -u+x | head -1)" -tc='graph*' > "$R/executor_graph_test.log" 2>&1
say "graph test exit $?"; grep -E "MESSAGE|largest|ERROR|test cases|assertions" "$R/executor_graph_test.log" | head -20 | tee -a "$R/graph_gpu.log"

say "wrapir run --graph on the exports"
tool=build/gpu-tools/tools/wrapir/wrapir
timeout ${RUN_S:-60} python3 - "$tool" "$EXPORTS" <<'EOF' 2>&1 | tee -a "$R/graph_gpu.log"
import subprocess, sys
from pathlib import Path
import torch
from safetensors.torch import load_file
tool, exports = sys.argv[1], Path(sys.argv[2])
for d in sorted(p for p in exports.iterdir() if (p / "program.json").is_file()):
    for graph in ([], ["--graph"]):
        out = Path("/tmp") / f"{d.name}.{len(graph)}.out.safetensors"
        r = subprocess.run([tool, "run", str(d / "program.json"), "--inputs", str(d / "inputs.safetensors"), "--device", "cuda",
                            "--repeat", "20", "-o", str(out)] + graph, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print(d.name, graph, "FAIL", " ".join((r.stderr or r.stdout).split())[:400]); continue
        got, want = load_file(str(out)), load_file(str(d / "outputs.safetensors"))
        worst = max((float((got[k].double() - w.double()).abs().max()) for k, w in want.items() if w.numel() and w.is_floating_point()), default=0.0)
        print(d.name, graph or "plain", f"max|diff|={worst:.3g}", " ".join(r.stdout.split()))
EOF

if [ "${BENCH:-1}" = 1 ]; then
  say "host-overhead benchmark"
  PYTHONPATH="$PWD/tools/inductor" timeout ${BENCH_S:-150} python3 bench/gpu/executor_overhead.py --exports "$EXPORTS" \
    --bench build/gpu-exec/bench/executor_overhead_bench --models "$(echo $MODELS | tr ' ' ,)" \
    --iterations ${ITER:-300} --out "$R/executor_overhead.md" > "$R/bench.log" 2>&1
  say "bench exit $?"; cat "$R/executor_overhead.md" 2>/dev/null | tee -a "$R/graph_gpu.log"
fi
if [ -d "${OLD_TREE:-/nonexistent}" ]; then
  wait; say "$(tail -1 "$B/old_build.log")"
  say "baseline executor (OLD_TREE), same machine, same exports"
  WRAPIR_BENCH_EXPORTS=$(for m in $MODELS; do printf '%s:' "$EXPORTS/$m"; done) timeout ${OLD_S:-40} \
    build/gpu-old/bench/executor_overhead_bench --benchmark_filter='^(Executor|RawLaunch)/' --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep -E "median|gpu" | tee -a "$R/graph_gpu.log"
  say "this tree's executor again, right after"
  WRAPIR_BENCH_EXPORTS=$(for m in $MODELS; do printf '%s:' "$EXPORTS/$m"; done) timeout ${OLD_S:-40} \
    build/gpu-exec/bench/executor_overhead_bench --benchmark_filter='^(Executor|Stubbed|Graph|RawLaunch)/' --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep -E "median|gpu" | tee -a "$R/graph_gpu.log"
fi
if [ "${PERF:-1}" = 1 ] && command -v perf > /dev/null; then
  say "perf of Executor/deep_mlp"
  WRAPIR_BENCH_EXPORTS="$EXPORTS/deep_mlp" timeout 60 perf record -F 20000 -g -o "$R/perf.data" \
    build/gpu-exec/bench/executor_overhead_bench --benchmark_filter='^Executor/' > "$R/perf_run.log" 2>&1
  timeout 60 perf report -i "$R/perf.data" --stdio --no-children --percent-limit 0.7 2>/dev/null | grep -v "^$" | head -150 > "$R/perf.txt"
  rm -f "$R/perf.data"
else
  say "no perf: $(command -v perf || echo not installed)"
fi
say done
