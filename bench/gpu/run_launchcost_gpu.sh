#!/usr/bin/env bash
# The CUDA executor's host cost per launch, this tree against a baseline
# tree, in one GPU-machine call (issue 14 §5; docs/performance.md "CUDA
# executor host overhead"): builds both trees' executor_overhead_bench
# (and this tree's GPU tests) side by side while it exports MODELS with
# `wrapir_inductor export --device cuda`; runs the GPU executor tests; then
# runs both benchmarks on the same exports, interleaved (old, new, old,
# new), each the median of 3 repetitions. Build directories are under
# /tmp (outside the carried tree). Every phase has a time limit.
#
# ROUNDS (default 2) rounds while under ROUND2_BEFORE seconds (default 200).
# PHASES=1 also builds this tree's executor_overhead_phases (the phase clock
# on: include/wrapir/detail/phase_clock.hpp) and runs it once after the
# tests: ns per call in each phase of Executor/, Stubbed/ and RawLaunch/
# (phases.log). Without OLD_TREE only this tree is built and run.
#
#   OLD_TREE=path/to/baseline [PHASES=1] bench/gpu/run_launchcost_gpu.sh [RESULTS_DIR]
set -u -o pipefail
cd "$(dirname "$0")/../.."
R=${1:-${OUT:-/tmp/launchcost-results}}
mkdir -p "$R"
T0=$SECONDS
say() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$R/launchcost.log"; }
say "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(date -u +%F)"
export WRAPIR_CUBLAS=${WRAPIR_CUBLAS:-$(ls /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13 2>/dev/null)}
MODELS=${MODELS:-deep_mlp mlp_layernorm_gelu rnn_unrolled add_relu}
W=/tmp/wb-launchcost
EXPORTS=$W/exports
mkdir -p "$EXPORTS" "$W/logs"
gpu_build() {  # SRC BUILD TARGETS...
  local src=$1 dir=$2; shift 2
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWRAPIR_ENABLE_CUDA=ON -DWRAPIR_BUILD_TESTS=ON \
    -DWRAPIR_BUILD_BENCHMARKS=ON -DWRAPIR_BUILD_EXAMPLES=OFF -DWRAPIR_BUILD_TOOLS=OFF -DWRAPIR_BUILD_FUZZERS=OFF \
    -DWRAPIR_GPU_ONLY=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build "$dir" -j 7 --target "$@"
}
PHASES=${PHASES:-0}
OLD_TREE=${OLD_TREE:-}
(gpu_build . $W/new executor_test cuda_host_tests executor_overhead_bench \
   $([ "$PHASES" = 1 ] && echo executor_overhead_phases) > $W/logs/new_build.log 2>&1
 echo "new build exit $?" >> $W/logs/new_build.log) &
new_pid=$!
old_pid=
if [ -n "$OLD_TREE" ]; then
  # Both builds run this tree's benchmark source (and the phase clock's
  # header it includes, off): only the library's headers differ.
  rm -rf $W/oldsrc && cp -r "$OLD_TREE" $W/oldsrc && OLD_TREE=$W/oldsrc
  cp bench/gpu/executor_overhead_bench.cpp $OLD_TREE/bench/gpu/
  cp -n include/wrapir/detail/phase_clock.hpp $OLD_TREE/include/wrapir/detail/
  (gpu_build "$OLD_TREE" $W/old executor_overhead_bench > $W/logs/old_build.log 2>&1
   echo "old build exit $?" >> $W/logs/old_build.log) &
  old_pid=$!
fi
for m in $MODELS; do
  (PYTHONPATH="$PWD/tools/inductor" timeout ${EXPORT_S:-170} python3 -m wrapir_inductor export "tests/models/$m.py:model" \
     --device cuda --out "$EXPORTS/$m" > $W/logs/export_$m.log 2>&1; echo "export $m exit $?" >> $W/logs/export_$m.log) &
done
wait $new_pid; say "$(tail -1 $W/logs/new_build.log)"; grep -E "error" $W/logs/new_build.log | head -20 | tee -a "$R/launchcost.log"
if [ -n "$old_pid" ]; then
  wait $old_pid; say "$(tail -1 $W/logs/old_build.log)"; grep -E "error" $W/logs/old_build.log | head -10 | tee -a "$R/launchcost.log"
fi
wait; for m in $MODELS; do tail -1 $W/logs/export_$m.log | tee -a "$R/launchcost.log"; done

say "GPU tests"
timeout ${TEST_S:-60} ctest --test-dir $W/new -R '^(gpu\.executor_test|unit\.cuda\.)' --output-on-failure --timeout 50 > "$R/gpu_tests.log" 2>&1
say "GPU tests exit $?"; grep -E "tests passed|Failed|\*\*\*|Not Run" "$R/gpu_tests.log" | tail -20 | tee -a "$R/launchcost.log"

list=$(for m in $MODELS; do [ -f "$EXPORTS/$m/program.json" ] && printf '%s:' "$EXPORTS/$m"; done)
bench() {  # NAME BINARY FILTER
  say "$1"
  WRAPIR_BENCH_EXPORTS=$list timeout ${BENCH_S:-45} "$2" --benchmark_filter="$3" --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep -E "median|gpu|rror" | tee -a "$R/launchcost.log"
}
if [ "$PHASES" = 1 ]; then
  say "this tree, phase clock on"
  WRAPIR_BENCH_EXPORTS=$list timeout ${BENCH_S:-45} $W/new/bench/executor_overhead_phases \
    --benchmark_filter='^(Executor|Stubbed|RawLaunch)/' --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true > "$R/phases.log" 2>&1
  grep -E "median|gpu|rror" "$R/phases.log" | tee -a "$R/launchcost.log"
fi
for round in $(seq 1 ${ROUNDS:-2}); do
  [ $round -gt 1 ] && [ $((SECONDS - T0)) -gt ${ROUND2_BEFORE:-200} ] && { say "no time for round $round"; break; }
  [ -n "$OLD_TREE" ] && bench "old tree, round $round" $W/old/bench/executor_overhead_bench '^(Executor|Stubbed|RawLaunch|Paired)/'
  bench "this tree, round $round" $W/new/bench/executor_overhead_bench '^(Executor|Stubbed|RawLaunch|Paired)/'
done
say done
