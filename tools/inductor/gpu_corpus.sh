#!/usr/bin/env bash
# Runs `wrapir_inductor check --device cuda` on every model of tests/models
# in one call on a machine with a CUDA device, PyTorch and Triton, and prints
# the table. Builds only the wrapir tool (Release).
#
#   tools/inductor/gpu_corpus.sh [RESULTS_DIR] [--only NAME]...
#
# RESULTS_DIR defaults to $OUT (the device tool's output folder) or
# build/gpu-tools/corpus. Writes RESULTS_DIR/corpus.md and
# RESULTS_DIR/corpus-logs.tgz (every model's check log and exported files).
# Exit status: the corpus run's (0 when every model met its expectation).
set -u -o pipefail
cd "$(dirname "$0")/../.."
results=${1:-${OUT:-build/gpu-tools/corpus}}
shift || true
build=build/gpu-tools
mkdir -p "$results"
log="$results/gpu_corpus.log"
: >"$log"
echo "== configure and build the wrapir tool ($build)" | tee -a "$log"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWRAPIR_BUILD_TOOLS=ON -DWRAPIR_BUILD_TESTS=OFF \
  -DWRAPIR_BUILD_BENCHMARKS=OFF -DWRAPIR_BUILD_EXAMPLES=OFF -DWRAPIR_BUILD_FUZZERS=OFF >>"$log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target wrapir >>"$log" 2>&1 ||
  { tail -40 "$log"; exit 2; }
tool=$(find "$build" -name wrapir -type f -perm -u+x | head -1)
work="$build/corpus-work"
rm -rf "$work"
echo "== corpus --device cuda (tool $tool)" | tee -a "$log"
PYTHONPATH="$PWD/tools/inductor${PYTHONPATH:+:$PYTHONPATH}" python3 -m wrapir_inductor corpus tests/models \
  --device cuda --wrapir "$tool" --out "$work" --jobs "${WRAPIR_CORPUS_JOBS:-6}" "$@" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
cp "$work/corpus.md" "$results/" 2>/dev/null
tar czf "$results/corpus-logs.tgz" -C "$work" . 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/== GPU: /' | tee -a "$log"
exit "$status"
