# cmake -P script: runs one command line of the wrapir CLI and checks its
# contract: on success exactly one line on stdout (compared whole) and exit
# code 0; on failure nothing on stdout, one line on stderr matching a regex,
# and exit code 1.
#
# Variables: EXE, ARGS (arguments separated by |), and one of STDOUT (the
# expected line), STDOUT_FILE (a file holding the expected stdout, for the
# commands that print many lines, e.g. `wrapir dump`) or ERROR (a regex the
# stderr line must match). With STDOUT_FILE, STDERR is a regex the one
# stderr line must match (`wrapir plan` prints its statistics there);
# without it stderr must be empty.
string(REPLACE "|" ";" _args "${ARGS}")
execute_process(COMMAND "${EXE}" ${_args}
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
set(_shown "wrapir ${ARGS}\n  exit code: ${_rc}\n  stdout: [${_out}]\n  stderr: [${_err}]")
if(DEFINED STDOUT_FILE)
  file(READ "${STDOUT_FILE}" _expected)
  if(DEFINED STDERR)
    string(REGEX MATCHALL "\n" _newlines "${_err}")
    list(LENGTH _newlines _lines)
    set(_err_ok FALSE)
    if(_lines EQUAL 1 AND _err MATCHES "${STDERR}")
      set(_err_ok TRUE)
    endif()
  elseif(_err STREQUAL "")
    set(_err_ok TRUE)
  else()
    set(_err_ok FALSE)
  endif()
  if(NOT _rc EQUAL 0 OR NOT _out STREQUAL "${_expected}" OR NOT _err_ok)
    message(FATAL_ERROR "expected exit 0, stdout equal to ${STDOUT_FILE} and stderr [${STDERR}], got:\n${_shown}")
  endif()
elseif(DEFINED STDOUT)
  if(NOT _rc EQUAL 0 OR NOT _out STREQUAL "${STDOUT}\n" OR NOT _err STREQUAL "")
    message(FATAL_ERROR "expected exit 0 and stdout [${STDOUT}], got:\n${_shown}")
  endif()
else()
  string(REGEX MATCHALL "\n" _newlines "${_err}")
  list(LENGTH _newlines _lines)
  if(NOT _rc EQUAL 1 OR NOT _out STREQUAL "" OR NOT _lines EQUAL 1 OR NOT _err MATCHES "${ERROR}")
    message(FATAL_ERROR "expected exit 1, empty stdout and one stderr line matching [${ERROR}], got:\n${_shown}")
  endif()
endif()
