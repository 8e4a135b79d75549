#!/usr/bin/env bash
# Compile-time benchmark: how long does a user TU that includes wrapir take?
#
#   tools/compile_time.sh [file.cpp...]      (default: bench/compile_time/*.cpp)
#   tools/compile_time.sh --headers          (each core header alone, full -c)
#
# For each file prints, as the best of $REPEAT runs (default 3),
#   $CXX -std=c++20 -O0 -fsyntax-only   (front end only: parsing + templates)
#   $CXX -std=c++20 -O0 -c              (full compile to an object file)
# in wall-clock seconds and CPU (user+system) seconds, and the peak memory
# of the full compile in MB (/usr/bin/time's maximum resident set size).
# On a shared machine the CPU seconds are the steadier figure.
# CXX defaults to g++. SEPARATE=1 compiles in separately compiled mode
# (-DWRAPIR_SEPARATE_COMPILATION: declarations only, the definitions being
# in wrapir::compiled). Figures belong in docs/performance.md next to this
# command.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cxx="${CXX:-g++}"
repeat="${REPEAT:-3}"
# WRAPIR_INCLUDE=<dir> times another tree's headers (say, main's) with the
# same translation units, for before/after figures from one run.
flags=(-std=c++20 -O0 -I"${WRAPIR_INCLUDE:-$here/include}")
if [[ "${SEPARATE:-0}" == 1 ]]; then
  flags+=(-DWRAPIR_SEPARATE_COMPILATION)
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

files=()
if [[ "${1:-}" == "--headers" ]]; then
  shift
  for h in wrapir/expr/expr.hpp wrapir/expr.hpp wrapir/ir/line.hpp wrapir/ir/program.hpp wrapir/ir/builder.hpp \
           wrapir/ir/verify.hpp wrapir/wrapir.hpp wrapir/emit/python.hpp; do
    f="$tmp/$(echo "$h" | tr '/.' '__').cpp"
    printf '#include <%s>\nint main() {}\n' "$h" > "$f"
    files+=("$f")
  done
else
  files=("$@")
fi
if [[ ${#files[@]} -eq 0 ]]; then
  shopt -s nullglob
  files=("$here"/bench/compile_time/*.cpp)
  shopt -u nullglob
fi
if [[ ${#files[@]} -eq 0 ]]; then
  echo "compile_time: no files to time" >&2
  exit 1
fi

# best_of <n> <command...>: prints "wall cpu peak_mb", the fastest wall and
# CPU times (2 decimals) and the largest peak memory over n runs.
best_of() {
  local n="$1"; shift
  local wall="" cpu="" peak=0 w c m
  for ((i = 0; i < n; i++)); do
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
    read -r w u s m < "$tmp/time"
    c="$(awk -v a="$u" -v b="$s" 'BEGIN { printf "%.2f", a + b }')"
    if [[ -z "$wall" ]] || awk -v a="$w" -v b="$wall" 'BEGIN { exit !(a < b) }'; then wall="$w"; fi
    if [[ -z "$cpu" ]] || awk -v a="$c" -v b="$cpu" 'BEGIN { exit !(a < b) }'; then cpu="$c"; fi
    if (( m > peak )); then peak="$m"; fi
  done
  echo "$wall $cpu $((peak / 1024))"
}

echo "compiler: $("$cxx" --version | head -n1)${SEPARATE:+ (SEPARATE=$SEPARATE)}"
printf '%-44s %22s %30s\n' "translation unit" "syntax-only s (cpu)" "full -c s (cpu), peak MB"
status=0
for f in "${files[@]}"; do
  name="${f#"$here"/}"
  name="${name#"$tmp"/}"
  if syn="$(best_of "$repeat" "$cxx" "${flags[@]}" -fsyntax-only "$f")" &&
     full="$(best_of "$repeat" "$cxx" "${flags[@]}" -c "$f" -o "$tmp/out.o")"; then
    read -r sw sc _ <<< "$syn"
    read -r fw fc fm <<< "$full"
    printf '%-44s %14s (%5s) %20s (%5s), %4s\n' "$name" "$sw" "$sc" "$fw" "$fc" "$fm"
  else
    printf '%-44s %22s %30s\n' "$name" "error" "error"
    status=1
  fi
done
exit "$status"
