#!/usr/bin/env bash
# Builds and runs every GPU test and benchmark of wrapir on a machine with a
# CUDA device, then prints one table of results.
#
#   bench/gpu/run_gpu_suite.sh [BUILD_DIR] [RESULTS_DIR]
#
# BUILD_DIR defaults to build/gpu, RESULTS_DIR to $OUT (the device tool's
# output folder) or BUILD_DIR/results. Needs what the CUDA preset needs
# (CMake, Ninja, a C++20 compiler, nvcc, Boost headers, doctest, Google
# Benchmark; Boost.JSON only for the Triton metadata checks);
# when PyTorch and Triton import, it first compiles the Triton kernels of
# tests/cuda/triton_test.cpp. The benchmark JSON files land in RESULTS_DIR.
# Exit status: 0 when every GPU test passed (or was skipped with a reason).
set -u -o pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/gpu}
results=${2:-${OUT:-$build/results}}
mkdir -p "$results"
log="$results/gpu_suite.log"
: >"$log"

step() { printf '== %s\n' "$*" | tee -a "$log"; }

step "configure ($build)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWRAPIR_ENABLE_CUDA=ON \
  -DWRAPIR_BUILD_TESTS=ON -DWRAPIR_BUILD_BENCHMARKS=ON -DWRAPIR_BUILD_EXAMPLES=OFF \
  -DWRAPIR_BUILD_TOOLS=OFF -DWRAPIR_BUILD_FUZZERS=OFF -DWRAPIR_GPU_ONLY=ON -DCMAKE_CUDA_ARCHITECTURES=90 >>"$log" 2>&1 ||
  { tail -40 "$log"; exit 2; }

# Only what runs here: each GPU test, the device-free CUDA checks, the GPU benchmarks.
targets=(cuda_host_tests)
for src in tests/cuda/*_test.cpp tests/cuda/*_test.cu bench/gpu/*_bench.cpp; do
  [ -e "$src" ] && targets+=("$(basename "${src%.*}")")
done
step "build: ${targets[*]}"
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >>"$log" 2>&1 ||
  { grep -E 'error|FAILED' "$log" | head -40; exit 2; }

kernels="$build/triton_kernels"
if python3 -c 'import torch, triton; assert torch.cuda.is_available()' 2>/dev/null; then
  step "Triton kernels ($kernels)"
  python3 tests/cuda/triton/make_triton_kernels.py "$kernels" 2>&1 | tee -a "$log"
  export WRAPIR_TRITON_KERNELS="$PWD/$kernels"
else
  step "no PyTorch/Triton with CUDA here: triton_test will report itself skipped"
fi

step "GPU tests (gpu.*) and the device-free CUDA checks (unit.cuda.*)"
ctest --test-dir "$build" -R '^(gpu|unit\.cuda)\.' --output-on-failure --timeout 600 2>&1 |
  tee "$results/ctest_gpu.txt" >>"$log"
tests_status=$?

step "benchmarks"
for bench in "$build"/bench/*_bench; do
  name=$(basename "$bench")
  case "$name" in launch_bench|graph_bench) ;; *) continue ;; esac
  reps=10
  [ "$name" = graph_bench ] && reps=5  # fixed iteration counts, about 0.5 s each
  "$bench" --benchmark_enable_random_interleaving=true --benchmark_repetitions=$reps \
    --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 \
    --benchmark_out="$results/$name.json" --benchmark_out_format=json >>"$log" 2>&1 ||
    echo "$name failed (see $log)" | tee -a "$log"
done

python3 - "$results" <<'PY'
import glob, json, os, re, sys
results = sys.argv[1]
print("\n| GPU test | result |\n|---|---|")
for line in open(os.path.join(results, "ctest_gpu.txt")):
    m = re.search(r"Test\s+#\d+: (.+?) \.+\**\s*(Passed|Failed|Not Run|\*\*\*Skipped|Skipped|\*\*\*Failed.*?|Exception.*?)\s+([\d.]+ sec)", line)
    if m:
        print(f"| {m.group(1)} | {m.group(2).strip('*')} ({m.group(3)}) |")
for path in sorted(glob.glob(os.path.join(results, "*_bench.json"))):
    data = json.load(open(path))
    ctx = data.get("context", {})
    print(f"\n{os.path.basename(path)}: {ctx.get('gpu', '?')}, driver {ctx.get('cuda_driver', '?')}, "
          f"host {ctx.get('host_name', '?')}, {ctx.get('date', '')}")
    print("| benchmark | median real time | median CPU time | per item |\n|---|---|---|---|")
    medians = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        unit = b.get("time_unit", "ns")
        per = ""
        medians[name] = b["real_time"]
        if "items_per_second" in b and b["items_per_second"]:
            medians[name] = 1e9 / b["items_per_second"]  # ns per launch / per kernel
            per = f"{medians[name]:.1f} ns/item"
        print(f"| {name} | {b['real_time']:.1f} {unit} | {b['cpu_time']:.1f} {unit} | {per} |")
    raw = medians.get("BM_RawCuLaunchKernel")
    if raw:
        for other in ("BM_WrapirLaunch", "BM_WrapirTypedKernel"):
            if other in medians:
                print(f"{other} / BM_RawCuLaunchKernel = {medians[other] / raw:.3f}")
    if "BM_MultiKernelDispatch" in medians and "BM_WrapirLaunch" in medians:
        print(f"BM_MultiKernelDispatch - BM_WrapirLaunch = "
              f"{medians['BM_MultiKernelDispatch'] - medians['BM_WrapirLaunch']:+.1f} ns per launch")
PY
exit "$tests_status"
