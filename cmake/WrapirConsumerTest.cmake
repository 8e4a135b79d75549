# cmake -P script behind the consumer.<mode> ctest tests: builds a small
# project that uses wrapir the way a user would, then runs it.
#
#   cmake -DMODE=add_subdirectory|find_package
#         -DCONSUMER_SOURCE_DIR=<tests/consumer/MODE>
#         -DWORK_DIR=<scratch dir under the build tree>
#         -DWRAPIR_SOURCE_DIR=<wrapir checkout> -DWRAPIR_BINARY_DIR=<wrapir build dir>
#         [-DCXX_COMPILER=..] [-DGENERATOR=..] [-DMAKE_PROGRAM=..] [-DBUILD_TYPE=..]
#         [-DBoost_DIR=..] [-DEXPECT_CPU=ON|OFF]
#         -P WrapirConsumerTest.cmake
#
# add_subdirectory: configure CONSUMER_SOURCE_DIR with -DWRAPIR_SOURCE_DIR=...;
#                   the consumer add_subdirectory()s the wrapir checkout.
# find_package:     `cmake --install WRAPIR_BINARY_DIR --prefix WORK_DIR/prefix
#                   --component wrapir_Development`, then configure the consumer
#                   with CMAKE_PREFIX_PATH=WORK_DIR/prefix and check that
#                   wrapir_DIR points into that prefix.
# Both then build the consumer and run its `consumer` executable (exit 0).
# EXPECT_CPU (wrapir's build found OpenBLAS): the consumer must get
# wrapir::cpu too, and its `consumer_cpu` executable runs as well.
# WORK_DIR is wiped first, so every run starts from scratch.
cmake_minimum_required(VERSION 3.25)

foreach(_var MODE CONSUMER_SOURCE_DIR WORK_DIR WRAPIR_SOURCE_DIR WRAPIR_BINARY_DIR)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "WrapirConsumerTest.cmake: -D${_var}=... is required")
  endif()
endforeach()
if(NOT MODE MATCHES "^(add_subdirectory|find_package)$")
  message(FATAL_ERROR "WrapirConsumerTest.cmake: MODE must be add_subdirectory or find_package, not '${MODE}'")
endif()

# run(<what> <command>...) — runs a command, echoes it, fails loudly with its
# output when it fails.
function(run what)
  list(JOIN ARGN " " _text)
  message(STATUS "consumer.${MODE}: ${what}: ${_text}")
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE _rc
    OUTPUT_VARIABLE _out
    ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    # NOTICE prints verbatim; FATAL_ERROR would re-wrap the tool output.
    message(NOTICE "----- output -----\n${_out}------------------")
    message(FATAL_ERROR "consumer.${MODE}: ${what} FAILED (exit ${_rc}): ${_text}")
  endif()
  set(LAST_OUTPUT "${_out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_build "${WORK_DIR}/build")
set(_prefix "${WORK_DIR}/prefix")

set(_configure "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${_build}"
  -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
if(DEFINED GENERATOR AND NOT GENERATOR STREQUAL "")
  list(APPEND _configure -G "${GENERATOR}")
endif()
if(DEFINED MAKE_PROGRAM AND NOT MAKE_PROGRAM STREQUAL "")
  list(APPEND _configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(DEFINED CXX_COMPILER AND NOT CXX_COMPILER STREQUAL "")
  list(APPEND _configure "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(DEFINED BUILD_TYPE AND NOT BUILD_TYPE STREQUAL "")
  list(APPEND _configure "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
if(DEFINED Boost_DIR AND NOT Boost_DIR STREQUAL "" AND NOT Boost_DIR MATCHES "NOTFOUND$")
  list(APPEND _configure "-DBoost_DIR=${Boost_DIR}")
endif()

if(EXPECT_CPU)
  list(APPEND _configure "-DWRAPIR_EXPECT_CPU=ON")
else()
  list(APPEND _configure "-DWRAPIR_EXPECT_CPU=OFF")
endif()

if(MODE STREQUAL "add_subdirectory")
  list(APPEND _configure "-DWRAPIR_SOURCE_DIR=${WRAPIR_SOURCE_DIR}")
else()
  run("install wrapir" "${CMAKE_COMMAND}" --install "${WRAPIR_BINARY_DIR}"
    --prefix "${_prefix}" --component wrapir_Development)
  if(NOT EXISTS "${_prefix}/lib/cmake/wrapir/wrapirConfig.cmake"
     AND NOT EXISTS "${_prefix}/lib64/cmake/wrapir/wrapirConfig.cmake")
    file(GLOB_RECURSE _cfg "${_prefix}/*wrapirConfig.cmake")
    if(NOT _cfg)
      message(FATAL_ERROR "consumer.find_package: the install put no wrapirConfig.cmake under ${_prefix}")
    endif()
  endif()
  list(APPEND _configure "-DCMAKE_PREFIX_PATH=${_prefix}")
endif()

run("configure" ${_configure})
if(MODE STREQUAL "find_package")
  # Make sure the installed package was used, not some other wrapir.
  file(STRINGS "${_build}/CMakeCache.txt" _dir_line REGEX "^wrapir_DIR:")
  string(REGEX REPLACE "^wrapir_DIR:[A-Z]+=" "" _wrapir_dir "${_dir_line}")
  file(REAL_PATH "${_prefix}" _prefix_real)
  if(EXISTS "${_wrapir_dir}")
    file(REAL_PATH "${_wrapir_dir}" _wrapir_dir)
  endif()
  string(FIND "${_wrapir_dir}" "${_prefix_real}" _pos)
  if(NOT _pos EQUAL 0)
    message(FATAL_ERROR "consumer.find_package: found wrapir at '${_wrapir_dir}', expected it under '${_prefix_real}'")
  endif()
endif()
run("build" "${CMAKE_COMMAND}" --build "${_build}")

set(_programs consumer)
if(EXPECT_CPU)
  list(APPEND _programs consumer_cpu)
endif()
foreach(_program IN LISTS _programs)
  set(_exe "${_build}/${_program}")
  if(NOT EXISTS "${_exe}")
    file(GLOB_RECURSE _exe LIST_DIRECTORIES false "${_build}/${_program}" "${_build}/${_program}.exe")
    if(NOT _exe)
      message(FATAL_ERROR "consumer.${MODE}: built, but found no '${_program}' executable under ${_build}")
    endif()
    list(GET _exe 0 _exe)
  endif()
  run("run ${_program}" "${_exe}")
endforeach()
message(STATUS "consumer.${MODE}: OK (${_programs})")
