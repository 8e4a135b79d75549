# cmake -P script behind the ctest test bench.smoke: runs every benchmark
# binary once with a tiny minimum time, so benchmarks keep compiling AND
# running (no figures are kept).
#
#   cmake -DBENCHMARKS=<exe>|<exe>... [-DMIN_TIME=0.01] [-DFILTER=regex] -P WrapirBenchSmoke.cmake
#
# FILTER defaults to "-1000000": the million-line sizes are left out (a
# leading '-' excludes what matches). In a Debug build they took 250 of the
# smoke's 270 seconds, and the same functions run at the smaller sizes.
#
# Google Benchmark 1.7.1 (Debian 12) reads --benchmark_min_time as a plain
# number of seconds ("0.01"); 1.8+ also accepts "0.01s" and warns on the bare
# number. The plain number works with both.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED BENCHMARKS OR BENCHMARKS STREQUAL "")
  message(STATUS "bench.smoke: no benchmark binaries")
  return()
endif()
if(NOT DEFINED MIN_TIME OR MIN_TIME STREQUAL "")
  set(MIN_TIME 0.01)
endif()
if(NOT DEFINED FILTER OR FILTER STREQUAL "")
  set(FILTER "-1000000")
endif()

string(REPLACE "|" ";" _benches "${BENCHMARKS}")
set(_failed "")
foreach(_exe IN LISTS _benches)
  message(STATUS "bench.smoke: ${_exe} --benchmark_min_time=${MIN_TIME} --benchmark_filter=${FILTER}")
  execute_process(
    COMMAND "${_exe}" --benchmark_min_time=${MIN_TIME} --benchmark_filter=${FILTER}
    RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    list(APPEND _failed "${_exe} (exit ${_rc})")
  endif()
endforeach()
if(_failed)
  list(JOIN _failed "\n  " _text)
  message(FATAL_ERROR "bench.smoke: failed:\n  ${_text}")
endif()
list(LENGTH _benches _n)
message(STATUS "bench.smoke: ${_n} benchmark binar(y/ies) ran")
