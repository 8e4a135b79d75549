#!/usr/bin/env bash
# wrapir developer entry point.
#
#   tools/dev.sh demo    build the release preset (examples + wrapir tool) and
#                        run every example in order
#   tools/dev.sh test    everything CI checks: the dev preset (g++: unit tests,
#                        header checks, compile-fail, consumers, examples,
#                        tool, benchmarks), the asan-ubsan preset (clang,
#                        ASan+UBSan, fuzzers) and the Inductor bridge (below:
#                        real torch.compile programs through wrapir); ends
#                        with the line `tests: P passed, F failed`
#   tools/dev.sh bridge-env
#                        create once (later: reuse) the Python environment of
#                        the Inductor bridge, outside the repository: torch
#                        2.11.0 and safetensors from PyPI; prints its python
#   tools/dev.sh bridge-test [NAME...]
#                        the bridge stage alone: builds the wrapir tool, runs
#                        the exporter's unit tests and `wrapir_inductor check
#                        --device cpu` on every model of tests/models (or the
#                        NAMEd ones), each held to its expectation; ends with
#                        the line `bridge: P passed, F failed`
#
# Both first make sure the Debian packages wrapir needs are installed
# (apt-get, as root or through sudo). Environment:
#   WRAPIR_JOBS=N        parallel build/test jobs (default 2)
#   WRAPIR_SKIP_SETUP=1  do not check/install packages
#   CI=true              never prompt (sudo -n)
#   WRAPIR_SKIP_BRIDGE=1 `test` skips the bridge stage (says so; for machines
#                        without PyPI access; CI does not set it)
#   WRAPIR_TORCH_VENV=DIR the bridge's environment (default
#                        ${XDG_CACHE_HOME:-$HOME/.cache}/wrapir/venv-torch-2.11.0)
#   WRAPIR_PYTHON=EXE    the Python that creates it (default python3, >= 3.10)
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${WRAPIR_JOBS:-2}"

say() { printf 'wrapir: %s\n' "$*"; }
die() { printf 'wrapir: error: %s\n' "$*" >&2; exit 1; }

# --------------------------------------------------------------------------
# set-up: required Debian packages
# --------------------------------------------------------------------------
# libopenblas-dev: the CPU backend's reference externs (wrapir::cpu); libssl3: libcrypto,
# loaded at run time for the SHA-256 of kernel identities; graphviz: `dot`, which renders the DOT
# emitter's output in its tests (they skip without it, so CI installs it).
required_packages=(cmake ninja-build g++ clang libclang-rt-14-dev libboost1.81-dev libboost-json1.81-dev doctest-dev libbenchmark-dev libopenblas-dev libssl3 graphviz)
# Debian's default Boost (1.74) headers would shadow 1.81's in /usr/include.
conflicting_packages=(libboost-dev libboost1.74-dev)

pkg_installed() {
  local status
  status="$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]]
}

# setup [EXTRA_PACKAGE...]
setup() {
  [[ "${WRAPIR_SKIP_SETUP:-0}" == 1 ]] && return 0
  local wanted=("${required_packages[@]}" "$@")
  if ! command -v dpkg-query >/dev/null 2>&1; then
    say "not a Debian system (no dpkg-query); make sure these are installed: ${wanted[*]}"
    return 0
  fi

  local p missing=()
  for p in "${wanted[@]}"; do
    pkg_installed "$p" || missing+=("$p")
  done

  if ((${#missing[@]})); then
    say "installing missing packages: ${missing[*]}"
    local sudo=()
    if [[ "$(id -u)" -ne 0 ]]; then
      if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
        [[ "${CI:-}" == true || ! -t 0 ]] && sudo=(sudo -n)
        sudo+=(env DEBIAN_FRONTEND=noninteractive)
      else
        die "missing packages and neither root nor sudo available; install them with:
  apt-get install -y --no-install-recommends ${missing[*]}"
      fi
    fi
    "${sudo[@]}" apt-get update -q ||
      die "apt-get update failed; install by hand: apt-get install -y --no-install-recommends ${missing[*]}"
    "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" ||
      die "apt-get install failed; install by hand: apt-get install -y --no-install-recommends ${missing[*]}"
  fi

  for p in "${conflicting_packages[@]}"; do
    if pkg_installed "$p"; then
      say "warning: $p is installed; its Boost headers conflict with libboost1.81-dev (wrapir needs Boost 1.81). Remove it: apt-get remove $p" >&2
    fi
  done
}

# --------------------------------------------------------------------------
# demo
# --------------------------------------------------------------------------
cmd_demo() {
  setup
  local preset=release bin="build/release"
  cmake --preset "$preset"

  local t targets=()
  for t in wrapir_examples wrapir_tool; do
    if ninja -C "$bin" -t query "$t" >/dev/null 2>&1; then
      targets+=("$t")
    fi
  done
  if ((${#targets[@]} == 0)); then
    say "nothing to build yet (no examples, no tool)"
    return 0
  fi
  cmake --build --preset "$preset" -j "$jobs" --target "${targets[@]}"

  local exe examples=() failed=0
  while IFS= read -r exe; do
    [[ -f "$exe" && -x "$exe" ]] && examples+=("$exe")
  done < <(find "$bin/examples" -maxdepth 1 -name 'example_*' 2>/dev/null | LC_ALL=C sort)
  if ((${#examples[@]} == 0)); then
    say "no examples yet (examples/NN_<topic>.cpp)"
    return 0
  fi

  for exe in "${examples[@]}"; do
    local name="${exe##*/example_}"
    printf '\n========== example %s ==========\n' "$name"
    if ! (cd "$bin/examples" && "./${exe##*/}"); then
      say "example $name FAILED" >&2
      failed=$((failed + 1))
    fi
  done
  printf '\n'
  if ((failed)); then
    say "$failed of ${#examples[@]} examples failed"
    return 1
  fi
  say "ran ${#examples[@]} example(s)"
}

# --------------------------------------------------------------------------
# test
# --------------------------------------------------------------------------
total_passed=0
total_failed=0

# run_stage <preset>: configure, build, ctest. Never exits; adds to the totals.
run_stage() {
  local preset="$1" bin="build/$1" log rc line
  local t0=$SECONDS
  printf '\n==================== stage %s ====================\n' "$preset"

  say "[$preset] configure"
  if ! cmake --preset "$preset"; then
    say "[$preset] configure FAILED (counted as 1 failed test)"
    total_failed=$((total_failed + 1))
    return 0
  fi

  say "[$preset] build (-j $jobs)"
  if ! cmake --build --preset "$preset" -j "$jobs" -- -k 0; then
    say "[$preset] build FAILED (counted as 1 failed test; its tests were not run)"
    total_failed=$((total_failed + 1))
    return 0
  fi

  say "[$preset] ctest (-j $jobs)"
  log="$bin/wrapir-ctest.log"
  set +e
  ctest --preset "$preset" --output-on-failure -j "$jobs" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e

  line="$(grep -Eo '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n1 || true)"
  if [[ -n "$line" ]]; then
    local failed total skipped
    failed="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+)/\1/' <<<"$line")"
    total="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+)/\2/' <<<"$line")"
    # ctest counts skipped tests (e.g. GPU tests without a GPU) as passed;
    # they are listed under "The following tests did not run:".
    skipped="$(sed -n '/^The following tests did not run:/,/^$/p' "$log" | grep -cE '\((Skipped|Disabled)\)$' || true)"
    total_passed=$((total_passed + total - failed - skipped))
    total_failed=$((total_failed + failed))
    say "[$preset] $((total - failed - skipped)) passed, $failed failed, $skipped skipped ($((SECONDS - t0)) s)"
  elif grep -q 'No tests were found' "$log"; then
    say "[$preset] no tests ($((SECONDS - t0)) s)"
  else
    say "[$preset] ctest gave no summary (exit $rc); counted as 1 failed test"
    total_failed=$((total_failed + 1))
  fi
}

# The bridge's virtual environment needs Python's venv module (Debian
# splits it out); only `test` and `bridge-*` ask for it, never `demo`.
bridge_packages=(python3 python3-venv)

cmd_test() {
  if [[ "${WRAPIR_SKIP_BRIDGE:-0}" == 1 ]]; then setup; else setup "${bridge_packages[@]}"; fi
  local stage
  for stage in dev asan-ubsan; do
    run_stage "$stage"
  done
  if [[ "${WRAPIR_SKIP_BRIDGE:-0}" == 1 ]]; then
    printf '\n'
    say "[bridge] skipped (WRAPIR_SKIP_BRIDGE=1): real Inductor programs were NOT checked"
  else
    bridge_stage "$root/build/dev/tools/wrapir/wrapir"
  fi
  printf '\n'
  echo "tests: $total_passed passed, $total_failed failed"
  ((total_failed == 0))
}

# --------------------------------------------------------------------------
# bridge: the Python environment of the Inductor exporter (tools/inductor)
# --------------------------------------------------------------------------
# torch is pinned to the GPU machine's version. PyPI has no CPU-only torch
# wheel for Linux x86_64: torch 2.11.0 from PyPI is the CUDA 13 build and
# requires the cuda-toolkit and nvidia-* wheels (about 4.6 GB installed),
# which `import torch` loads even when only the CPU is used.
# numpy only silences torch's warning that it is missing.
bridge_requirements=(torch==2.11.0 safetensors==0.8.0 numpy==2.4.6)
bridge_venv="${WRAPIR_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/wrapir/venv-torch-2.11.0}"
bridge_python="$bridge_venv/bin/python"

# The stamp says the environment was completed for exactly these
# requirements; it is written last, so an interrupted install is redone.
bridge_stamp_text() {
  printf 'wrapir bridge environment\n'
  printf '%s\n' "${bridge_requirements[@]}"
}

bridge_env_ready() {
  [[ -x "$bridge_python" && -f "$bridge_venv/wrapir-bridge.stamp" ]] &&
    [[ "$(cat "$bridge_venv/wrapir-bridge.stamp")" == "$(bridge_stamp_text)" ]] &&
    "$bridge_python" -c 'import torch, safetensors' >/dev/null 2>&1
}

# About 4.7 GB installed; pip unpacks the 530 MB torch wheel beside it.
bridge_check_disk() {
  local dir avail_kb
  dir="$(dirname "$bridge_venv")"
  avail_kb="$(df -Pk "$dir" 2>/dev/null | awk 'NR == 2 {print $4}')"
  if [[ -n "$avail_kb" ]] && ((avail_kb < 6 * 1024 * 1024)); then
    die "only $((avail_kb / 1024)) MB free under $dir; the bridge environment needs about 6 GB (set WRAPIR_TORCH_VENV elsewhere)"
  fi
}

# Fail fast, with a clear message, when the package index cannot be reached
# (pip itself would retry for minutes and then print a long traceback).
bridge_check_index() {
  local index="${PIP_INDEX_URL:-https://pypi.org/simple}"
  if ! "$bridge_python" - "$index" <<'PYEOF'
import sys, urllib.request
url = sys.argv[1].rstrip("/") + "/safetensors/"
for attempt in range(3):
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            sys.exit(0 if response.status == 200 else 1)
    except Exception as e:
        error = e
print(f"wrapir: cannot reach the package index: {url}: {error}", file=sys.stderr)
sys.exit(1)
PYEOF
  then
    die "the bridge needs ${bridge_requirements[*]} from PyPI ($index), which is unreachable from here.
  Check the network or proxy (pip honours HTTPS_PROXY and PIP_INDEX_URL), or run
  WRAPIR_SKIP_BRIDGE=1 tools/dev.sh test to skip the bridge stage (CI must not)."
  fi
}

bridge_env() {
  if bridge_env_ready; then
    say "bridge environment: $bridge_venv (reused; ${bridge_requirements[*]})"
    return 0
  fi
  mkdir -p "$(dirname "$bridge_venv")"
  # One creator at a time; a second caller waits, then finds it ready.
  local bridge_lock
  exec {bridge_lock}>"$bridge_venv.lock"
  flock "$bridge_lock"
  if bridge_env_ready; then
    exec {bridge_lock}>&-
    say "bridge environment: $bridge_venv (reused; ${bridge_requirements[*]})"
    return 0
  fi

  local t0=$SECONDS
  if ! "$bridge_python" -c 'import sys' >/dev/null 2>&1; then
    local host_python="${WRAPIR_PYTHON:-python3}"
    command -v "$host_python" >/dev/null 2>&1 || die "no $host_python: the bridge needs Python 3.10 or newer (Debian: python3 python3-venv)"
    "$host_python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
      die "$host_python is $("$host_python" -V 2>&1); torch 2.11 needs Python 3.10 or newer"
    "$host_python" -c 'import venv, ensurepip' >/dev/null 2>&1 ||
      die "$host_python cannot create virtual environments; install Debian's python3-venv (apt-get install -y python3-venv)"
    say "creating the bridge environment in $bridge_venv"
    rm -rf "$bridge_venv"
    "$host_python" -m venv "$bridge_venv" || die "could not create $bridge_venv"
  else
    say "completing the bridge environment in $bridge_venv"
  fi
  say "  installs from PyPI: ${bridge_requirements[*]}"
  say "  torch 2.11.0 from PyPI is the CUDA 13 build: it pulls in triton and the cuda-toolkit/nvidia-* wheels"
  say "  (about 4.6 GB on disk, 3-4 minutes on the dev VM); done once, later runs reuse it"
  bridge_check_disk
  bridge_check_index
  local attempt
  for attempt in 1 2 3; do
    # --timeout/--retries: a stalled connection fails in a minute and is
    # retried; a whole failed install is retried twice, resuming (pip skips
    # what is already installed).
    if "$bridge_python" -m pip install --quiet --no-cache-dir --disable-pip-version-check \
      --timeout 60 --retries 5 "${bridge_requirements[@]}"; then
      break
    fi
    ((attempt < 3)) || die "pip could not install ${bridge_requirements[*]} into $bridge_venv (3 attempts; output above)"
    say "pip failed (attempt $attempt of 3); retrying in $((attempt * 15)) s"
    sleep $((attempt * 15))
  done
  "$bridge_python" -c 'import torch, safetensors' ||
    die "the environment $bridge_venv cannot import torch and safetensors"
  bridge_stamp_text >"$bridge_venv/wrapir-bridge.stamp"
  exec {bridge_lock}>&-
  say "bridge environment ready: $bridge_venv ($(du -sh "$bridge_venv" | cut -f1), $((SECONDS - t0)) s)"
}

cmd_bridge_env() {
  setup "${bridge_packages[@]}" >&2
  bridge_env
  printf '%s\n' "$bridge_python"
}

# bridge_stage WRAPIR_TOOL [NAME...]: the bridge's checks, counted into the
# totals (the exporter's unit tests as one test, each corpus model as one).
# Never exits: an environment that cannot be made counts as one failure.
bridge_stage() {
  local wrapir_bin="$1" t0=$SECONDS rc
  shift
  printf '\n==================== stage bridge ====================\n'
  if ! (bridge_env); then
    say "[bridge] no Python environment (above); counted as 1 failed test"
    total_failed=$((total_failed + 1))
    return 0
  fi
  if [[ ! -x "$wrapir_bin" ]]; then
    say "[bridge] no wrapir tool at $wrapir_bin (the dev build failed?); counted as 1 failed test"
    total_failed=$((total_failed + 1))
    return 0
  fi
  local out="$root/build/bridge"
  mkdir -p "$out"
  export PYTHONDONTWRITEBYTECODE=1

  say "[bridge] wrapir_inductor unit tests"
  if PYTHONPATH="$root/tools/inductor" "$bridge_python" -m unittest discover -s "$root/tools/inductor/tests"; then
    total_passed=$((total_passed + 1))
  else
    say "[bridge] unit tests FAILED"
    total_failed=$((total_failed + 1))
  fi

  say "[bridge] check --device cpu on the corpus (tests/models; a log and the files per model in $out/corpus)"
  local only=() name
  for name in "$@"; do only+=(--only "$name"); done
  set +e
  PYTHONPATH="$root/tools/inductor" PYTHONUNBUFFERED=1 "$bridge_python" -m wrapir_inductor corpus \
    "$root/tests/models" --device cpu --wrapir "$wrapir_bin" --out "$out/corpus" --jobs "$jobs" "${only[@]}" 2>&1 |
    tee "$out/corpus.log"
  rc=${PIPESTATUS[0]}
  set -e
  local line passed failed
  line="$(grep -E '^corpus: [0-9]+ passed, [0-9]+ failed' "$out/corpus.log" | tail -n1 || true)"
  if [[ -n "$line" ]]; then
    passed="$(sed -E 's/^corpus: ([0-9]+) passed, ([0-9]+) failed.*/\1/' <<<"$line")"
    failed="$(sed -E 's/^corpus: ([0-9]+) passed, ([0-9]+) failed.*/\2/' <<<"$line")"
    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
    say "[bridge] $passed passed, $failed failed ($((SECONDS - t0)) s)"
  else
    say "[bridge] the corpus run gave no summary (exit $rc); counted as 1 failed test ($((SECONDS - t0)) s)"
    total_failed=$((total_failed + 1))
  fi
}

cmd_bridge_test() {
  setup "${bridge_packages[@]}"
  cmake --preset dev >/dev/null
  cmake --build --preset dev -j "$jobs" --target wrapir_tool
  bridge_stage "$root/build/dev/tools/wrapir/wrapir" "$@"
  printf '\n'
  echo "bridge: $total_passed passed, $total_failed failed"
  ((total_failed == 0))
}

# --------------------------------------------------------------------------
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
}

case "${1:-}" in
  demo) shift; cmd_demo "$@" ;;
  test) shift; cmd_test "$@" ;;
  bridge-env) shift; cmd_bridge_env "$@" ;;
  bridge-test) shift; cmd_bridge_test "$@" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
