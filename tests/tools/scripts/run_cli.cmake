# cmake -P script: one `wrapir run` command line whose output goes to a file
# (-o) or is not one fixed line, checked against its contract.
#
# Variables: EXE; ARGS (arguments separated by |; %DIR% stands for DIR);
# DIR (a scratch folder, emptied first); SETUP (optional: `link` plants
# DIR/out.safetensors as a symbolic link to DIR/victim, `fifo` makes it a
# FIFO). Then either ERROR (a regex: exit 1, nothing on stdout, one stderr
# line matching it; with SETUP, the victim is unchanged and the link or FIFO
# still there) or success: exit 0, empty stderr, stdout matching
# STDOUT_REGEX (default: empty), and, with EXPECTED, DIR/out.safetensors
# byte for byte equal to EXPECTED.
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(_out "${DIR}/out.safetensors")
if(SETUP STREQUAL "link")
  file(WRITE "${DIR}/victim" "precious\n")
  file(CREATE_LINK "${DIR}/victim" "${_out}" SYMBOLIC)
elseif(SETUP STREQUAL "fifo")
  execute_process(COMMAND mkfifo "${_out}" RESULT_VARIABLE _mkfifo)
  if(NOT _mkfifo EQUAL 0)
    message(STATUS "no mkfifo here: nothing to check")
    return()
  endif()
endif()

string(REPLACE "%DIR%" "${DIR}" _args "${ARGS}")
string(REPLACE "|" ";" _args "${_args}")
execute_process(COMMAND "${EXE}" ${_args}
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _stdout ERROR_VARIABLE _stderr TIMEOUT 60)
set(_shown "wrapir ${_args}\n  exit code: ${_rc}\n  stdout: [${_stdout}]\n  stderr: [${_stderr}]")

if(DEFINED ERROR)
  string(REGEX MATCHALL "\n" _newlines "${_stderr}")
  list(LENGTH _newlines _lines)
  if(NOT _rc EQUAL 1 OR NOT _stdout STREQUAL "" OR NOT _lines EQUAL 1 OR NOT _stderr MATCHES "${ERROR}")
    message(FATAL_ERROR "expected exit 1, empty stdout and one stderr line matching [${ERROR}], got:\n${_shown}")
  endif()
  if(SETUP STREQUAL "link")
    file(READ "${DIR}/victim" _victim)
    if(NOT _victim STREQUAL "precious\n" OR NOT IS_SYMLINK "${_out}")
      message(FATAL_ERROR "the planted link or its target changed: victim [${_victim}]\n${_shown}")
    endif()
  endif()
  file(GLOB _left RELATIVE "${DIR}" "${DIR}/*")
  list(SORT _left)
  set(_expected "")
  if(SETUP STREQUAL "link")
    set(_expected "out.safetensors;victim")
  elseif(SETUP STREQUAL "fifo")
    set(_expected "out.safetensors")
  endif()
  if(NOT "${_left}" STREQUAL "${_expected}")
    message(FATAL_ERROR "files left in ${DIR}: [${_left}], expected [${_expected}]\n${_shown}")
  endif()
  return()
endif()

if(NOT DEFINED STDOUT_REGEX)
  set(STDOUT_REGEX "^$")
endif()
if(NOT _rc EQUAL 0 OR NOT _stderr STREQUAL "" OR NOT _stdout MATCHES "${STDOUT_REGEX}")
  message(FATAL_ERROR "expected exit 0, empty stderr and stdout matching [${STDOUT_REGEX}], got:\n${_shown}")
endif()
if(DEFINED EXPECTED)
  file(READ "${_out}" _written HEX)
  file(READ "${EXPECTED}" _wanted HEX)
  if(NOT _written STREQUAL _wanted)
    message(FATAL_ERROR "${_out} differs from ${EXPECTED}:\n  written ${_written}\n  wanted  ${_wanted}\n${_shown}")
  endif()
endif()
