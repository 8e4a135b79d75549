# wrapir_target_warnings(<target> [<target>...])
#
# Strict warnings for wrapir's *own* targets (tests, header checks, examples,
# tools, benchmarks, fuzzers). Never attached to wrapir::wrapir, so consumers
# keep their own warning flags.
#
# -Werror is opt-in (WRAPIR_WARNINGS_AS_ERRORS, OFF by default) so that a
# plain `cmake -DCMAKE_BUILD_TYPE=Release` build with a newer or older
# compiler than ours never fails on a new warning. Every preset, and so CI,
# turns it ON.
include_guard(GLOBAL)

option(WRAPIR_WARNINGS_AS_ERRORS "Build wrapir's own targets with -Werror (the presets and CI turn it on)" OFF)

function(wrapir_target_warnings)
  foreach(target IN LISTS ARGN)
    if(NOT TARGET "${target}")
      message(FATAL_ERROR "wrapir_target_warnings: '${target}' is not a target")
    endif()
    # $<COMPILE_LANGUAGE:CXX> keeps these flags away from nvcc (CUDA sources).
    target_compile_options("${target}" PRIVATE
      $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU,Clang,AppleClang>>:-Wall;-Wextra;-Wpedantic>
      $<$<AND:$<BOOL:${WRAPIR_WARNINGS_AS_ERRORS}>,$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU,Clang,AppleClang>>:-Werror>
      $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:MSVC>>:/W4;/permissive->
      $<$<AND:$<BOOL:${WRAPIR_WARNINGS_AS_ERRORS}>,$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:MSVC>>:/WX>)
  endforeach()
endfunction()
