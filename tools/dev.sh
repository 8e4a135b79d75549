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
#
# Both first make sure the Debian packages wrapir needs are installed
# (apt-get, as root or through sudo). Environment:
#   WRAPIR_JOBS=N        parallel build/test jobs (default 2)
#   WRAPIR_SKIP_SETUP=1  do not check/install packages
#   CI=true              never prompt (sudo -n)
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
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
}

case "${1:-}" in
  demo) shift; cmd_demo "$@" ;;
  test) shift; cmd_test "$@" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
