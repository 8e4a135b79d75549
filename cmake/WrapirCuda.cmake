# CUDA support for wrapir. Included by the top-level CMakeLists.txt after
# find_package(CUDAToolkit) succeeded and the INTERFACE target wrapir_cuda
# (wrapir::cuda) exists.
#
#  * CUDA 13 moved the CCCL headers (libcu++, CUB, Thrust) into
#    <cuda>/include/cccl. nvcc finds them by itself; host compilers do not, so
#    the folder is added to wrapir::cuda's include path when it exists.
#  * The CUDA *language* is enabled only when wrapir builds its own tests
#    (nothing else compiles .cu files). Consumers that add_subdirectory(wrapir)
#    never get enable_language(CUDA) forced on them.
#  * CMake 3.25 does not know nvcc's C++20 flag; we supply it.
#  * wrapir_add_cuda_test(<name> <sources>...) builds a CUDA test executable
#    (doctest, wrapir::cuda) and registers it with ctest, label "gpu".
#
# This file must be include()d at directory scope (enable_language() is not
# allowed inside a function).
include_guard(DIRECTORY)

# ---- CCCL headers --------------------------------------------------------
set(WRAPIR_CUDA_CCCL_INCLUDE_DIR "")
foreach(_wrapir_inc IN LISTS CUDAToolkit_INCLUDE_DIRS)
  if(IS_DIRECTORY "${_wrapir_inc}/cccl")
    set(WRAPIR_CUDA_CCCL_INCLUDE_DIR "${_wrapir_inc}/cccl")
    break()
  endif()
endforeach()
unset(_wrapir_inc)
if(WRAPIR_CUDA_CCCL_INCLUDE_DIR AND TARGET wrapir_cuda)
  # Only for the build tree; the installed package config re-derives the path
  # from the consumer's own CUDA Toolkit (see wrapirConfig.cmake.in).
  target_include_directories(wrapir_cuda SYSTEM INTERFACE
    $<BUILD_INTERFACE:${WRAPIR_CUDA_CCCL_INCLUDE_DIR}>)
endif()

# ---- CUDA language (our own CUDA tests and GPU benchmarks only) -----------------------------
set(WRAPIR_CUDA_LANGUAGE OFF)
if(WRAPIR_BUILD_TESTS OR WRAPIR_BUILD_BENCHMARKS)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # Hopper (H100/H200). Must be set before enable_language(CUDA), or CMake
    # probes a GPU we may not have.
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
    set(CMAKE_CUDA_COMPILER "${CUDAToolkit_NVCC_EXECUTABLE}")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    # CMake 3.25's compiler table has no C++20 entry for nvcc; without these,
    # CUDA_STANDARD 20 / cuda_std_20 silently drops the flag or errors out.
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    set(WRAPIR_CUDA_LANGUAGE ON)
  else()
    message(STATUS "wrapir: CUDA Toolkit found but no working nvcc — CUDA tests are switched off")
  endif()
endif()

# ---- wrapir_add_cuda_test(<name> <sources>...) ---------------------------
# Builds the executable <name> from <sources> (.cu and/or .cpp), links
# wrapir::cuda + doctest (and doctest's main from tests/main.cpp, unless a
# source defines its own `int main(`), and registers ctest test "gpu.<name>"
# with label "gpu". A test without a usable GPU should print
# "skipped: no CUDA device" (and may exit 77); ctest then reports it as
# skipped, not failed. The same applies when the driver library
# (libcuda.so.1) is missing altogether.
function(wrapir_add_cuda_test name)
  if(NOT WRAPIR_CUDA_LANGUAGE)
    message(STATUS "wrapir: skipping CUDA test ${name} (CUDA language not enabled)")
    return()
  endif()
  if(NOT ARGN)
    message(FATAL_ERROR "wrapir_add_cuda_test(${name}): no sources given")
  endif()
  if(NOT TARGET wrapir_doctest_main)
    message(FATAL_ERROR "wrapir_add_cuda_test(${name}): call it from tests/ (needs wrapir_doctest_main)")
  endif()
  set(_own_main FALSE)
  foreach(_src IN LISTS ARGN)
    if(NOT IS_ABSOLUTE "${_src}")
      set(_src "${CMAKE_CURRENT_SOURCE_DIR}/${_src}")
    endif()
    file(STRINGS "${_src}" _main REGEX "int[ \t]+main[ \t]*\\(")
    if(_main)
      set(_own_main TRUE)
    endif()
  endforeach()
  add_executable(${name} ${ARGN})
  if(_own_main)
    target_link_libraries(${name} PRIVATE wrapir::cuda doctest::doctest)
  else()
    target_link_libraries(${name} PRIVATE wrapir::cuda wrapir_doctest_main)
  endif()
  target_compile_features(${name} PRIVATE cxx_std_20)
  set_target_properties(${name} PROPERTIES
    CUDA_STANDARD 20
    CUDA_STANDARD_REQUIRED ON
    CUDA_EXTENSIONS OFF
    CUDA_SEPARABLE_COMPILATION OFF)
  target_compile_definitions(${name} PRIVATE WRAPIR_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  wrapir_target_warnings(${name})
  add_test(NAME gpu.${name} COMMAND ${name})
  set_tests_properties(gpu.${name} PROPERTIES
    LABELS "gpu"
    SKIP_RETURN_CODE 77
    SKIP_REGULAR_EXPRESSION "skipped: no CUDA device;libcuda\\.so\\.1: cannot open shared object file"
    # ASan reserves the address range the CUDA runtime wants unless told not to.
    ENVIRONMENT "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0")
endfunction()

# ---- wrapir_add_cuda_kernel_images(<target> <source.cu> <out_var_prefix>) --
# Compiles <source.cu> three ways — cubin, PTX and fatbin — for the first
# architecture of CMAKE_CUDA_ARCHITECTURES, into <binary dir>/<target>/, as
# files the driver API loads (wrapir/cuda/module.hpp). Creates the custom
# target <target> and sets <prefix>_CUBIN, <prefix>_PTX, <prefix>_FATBIN in
# the caller's scope.
function(wrapir_add_cuda_kernel_images target source prefix)
  if(NOT WRAPIR_CUDA_LANGUAGE)
    message(FATAL_ERROR "wrapir_add_cuda_kernel_images(${target}): the CUDA language is not enabled")
  endif()
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  get_filename_component(_stem "${source}" NAME_WE)
  list(GET CMAKE_CUDA_ARCHITECTURES 0 _arch)
  string(REGEX REPLACE "-(real|virtual)$" "" _arch "${_arch}")
  set(_cubin "${_dir}/${_stem}.cubin")
  set(_ptx "${_dir}/${_stem}.ptx")
  set(_fatbin "${_dir}/${_stem}.fatbin")
  add_custom_command(
    OUTPUT "${_cubin}" "${_ptx}" "${_fatbin}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${_dir}"
    COMMAND "${CMAKE_CUDA_COMPILER}" -std=c++20 -cubin -arch=sm_${_arch} -o "${_cubin}" "${source}"
    COMMAND "${CMAKE_CUDA_COMPILER}" -std=c++20 -ptx -arch=compute_${_arch} -o "${_ptx}" "${source}"
    COMMAND "${CMAKE_CUDA_COMPILER}" -std=c++20 -fatbin
            "-gencode=arch=compute_${_arch},code=[sm_${_arch},compute_${_arch}]" -o "${_fatbin}" "${source}"
    DEPENDS "${source}"
    COMMENT "wrapir: ${_stem} as cubin, PTX and fatbin (sm_${_arch})"
    VERBATIM)
  add_custom_target(${target} DEPENDS "${_cubin}" "${_ptx}" "${_fatbin}")
  set(${prefix}_CUBIN "${_cubin}" PARENT_SCOPE)
  set(${prefix}_PTX "${_ptx}" PARENT_SCOPE)
  set(${prefix}_FATBIN "${_fatbin}" PARENT_SCOPE)
endfunction()
