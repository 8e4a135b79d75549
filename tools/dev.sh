#!/usr/bin/env bash
# wrapir developer entry point.
#
#   tools/dev.sh demo    build the release preset (examples + wrapir tool) and
#                        run every example in order
#   tools/dev.sh test    everything CI checks: the dev preset (g++: unit tests,
#                        header checks, compile-fail, consumers, examples,
#                        tool, benchmarks) and the asan-ubsan preset (clang,
#                        ASan+UBSan, fuzzers); ends with the line
#                        `tests: P passed, F failed`
#   tools/dev.sh bridge-env
#                        create once (later: reuse) the Python environment of
#                        the Inductor bridge, outside the repository: torch
#                        2.11.0 and safetensors from PyPI; prints its python
#   tools/dev.sh bridge-test
#                        the bridge's checks (not part of `test` yet): builds
#                        the wrapir tool and runs `wrapir_inductor check
#                        --device cpu` on every model of tests/models; ends
#                        with the line `bridge: P passed, F failed`
#
# Both first make sure the Debian packages wrapir needs are installed
# (apt-get, as root or through sudo). Environment:
#   WRAPIR_JOBS=N        parallel build/test jobs (default 2)
#   WRAPIR_SKIP_SETUP=1  do not check/install packages
#   CI=true              never prompt (sudo -n)
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
required_packages=(cmake ninja-build g++ clang libclang-rt-14-dev libboost1.81-dev libboost-json1.81-dev doctest-dev libbenchmark-dev)
# Debian's default Boost (1.74) headers would shadow 1.81's in /usr/include.
conflicting_packages=(libboost-dev libboost1.74-dev)

pkg_installed() {
  local status
  status="$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]]
}

setup() {
  [[ "${WRAPIR_SKIP_SETUP:-0}" == 1 ]] && return 0
  if ! command -v dpkg-query >/dev/null 2>&1; then
    say "not a Debian system (no dpkg-query); make sure these are installed: ${required_packages[*]}"
    return 0
  fi

  local p missing=()
  for p in "${required_packages[@]}"; do
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

cmd_test() {
  setup
  local stage
  for stage in dev asan-ubsan; do
    run_stage "$stage"
  done
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
  "$bridge_python" -m pip install --quiet --no-cache-dir --disable-pip-version-check "${bridge_requirements[@]}" ||
    die "pip could not install ${bridge_requirements[*]} into $bridge_venv"
  "$bridge_python" -c 'import torch, safetensors' ||
    die "the environment $bridge_venv cannot import torch and safetensors"
  bridge_stamp_text >"$bridge_venv/wrapir-bridge.stamp"
  exec {bridge_lock}>&-
  say "bridge environment ready: $bridge_venv ($(du -sh "$bridge_venv" | cut -f1), $((SECONDS - t0)) s)"
}

cmd_bridge_env() {
  bridge_env
  printf '%s\n' "$bridge_python"
}

cmd_bridge_test() {
  setup
  bridge_env
  cmake --preset dev >/dev/null
  cmake --build --preset dev -j "$jobs" --target wrapir_tool
  local wrapir_bin="$root/build/dev/tools/wrapir/wrapir"
  [[ -x "$wrapir_bin" ]] || die "no wrapir tool at $wrapir_bin"

  local out="$root/build/bridge" model spec name passed=0 failed=0 rc
  mkdir -p "$out"
  export PYTHONDONTWRITEBYTECODE=1

  printf '\n========== wrapir_inductor unit tests ==========\n'
  if PYTHONPATH="$root/tools/inductor" "$bridge_python" -m unittest discover -s "$root/tools/inductor/tests"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi

  # Nothing is dropped: subgraphs (torch.cond) are not translated yet, so
  # this export must exit 2 and name their lines.
  printf '\n========== unsupported constructs are reported ==========\n'
  set +e
  PYTHONPATH="$root/tools/inductor" "$bridge_python" -m wrapir_inductor export \
    "$root/tools/inductor/tests/unsupported/cond.py:model" --device cpu \
    --out "$out/unsupported_cond" 2>"$out/unsupported_cond.stderr"
  rc=$?
  set -e
  grep '^wrapir_inductor: ' "$out/unsupported_cond.stderr" || true
  if ((rc == 2)) && grep -q 'EnterSubgraphLine' "$out/unsupported_cond.stderr"; then
    passed=$((passed + 1))
  else
    say "expected exit 2 naming EnterSubgraphLine, got exit $rc"
    failed=$((failed + 1))
  fi

  # Inductor's pool planner (memory_planning=True) on the MLP.
  printf '\n========== model mlp_layernorm_gelu with memory_planning=True ==========\n'
  if PYTHONPATH="$root/tools/inductor" "$bridge_python" -m wrapir_inductor check \
    "$root/tests/models/mlp_layernorm_gelu.py:model" --device cpu --config memory_planning=True \
    --wrapir "$wrapir_bin" --out "$out/mlp_layernorm_gelu_pools"; then
    passed=$((passed + 1))
  else
    say "model mlp_layernorm_gelu (memory_planning=True) FAILED"
    failed=$((failed + 1))
  fi
  for model in "$root"/tests/models/*.py; do
    [[ -f "$model" ]] || continue
    name="$(basename "$model" .py)"
    spec="$model:model"
    printf '\n========== model %s ==========\n' "$name"
    if PYTHONPATH="$root/tools/inductor" "$bridge_python" -m wrapir_inductor check "$spec" --device cpu \
      --wrapir "$wrapir_bin" --out "$out/$name"; then
      passed=$((passed + 1))
    else
      say "model $name FAILED"
      failed=$((failed + 1))
    fi
  done
  printf '\n'
  echo "bridge: $passed passed, $failed failed"
  ((failed == 0))
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
