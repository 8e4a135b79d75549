# cmake -P script: runs one wrapir command line that must fail cleanly:
# exit code 1 or 2 (not a crash, not a timeout), nothing on stdout, and a
# stderr whose last line matches ERROR and starts with "wrapir: error: ".
# LINES (default 1) is the exact number of stderr lines (more when findings
# precede the error line).
#
# Variables: EXE, ARGS (arguments separated by |), ERROR (regex), LINES;
# STDOUT_TO: a file stdout goes to (e.g. /dev/full) instead of being checked.
string(REPLACE "|" ";" _args "${ARGS}")
if(NOT DEFINED LINES)
  set(LINES 1)
endif()
if(DEFINED STDOUT_TO)
  execute_process(COMMAND "${EXE}" ${_args}
    RESULT_VARIABLE _rc OUTPUT_FILE "${STDOUT_TO}" ERROR_VARIABLE _err TIMEOUT 20)
  set(_out "")
else()
  execute_process(COMMAND "${EXE}" ${_args}
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err TIMEOUT 20)
endif()
set(_shown "wrapir ${ARGS}\n  exit code: ${_rc}\n  stdout: [${_out}]\n  stderr: [${_err}]")
string(REGEX MATCHALL "\n" _newlines "${_err}")
list(LENGTH _newlines _lines)
string(REGEX REPLACE "^(.*\n)?([^\n]*)\n$" "\\2" _last "${_err}")
if(NOT (_rc STREQUAL "1" OR _rc STREQUAL "2") OR NOT _out STREQUAL "" OR NOT _lines EQUAL LINES
   OR NOT _last MATCHES "^wrapir: error: " OR NOT _last MATCHES "${ERROR}")
  message(FATAL_ERROR "expected exit 1 or 2, empty stdout and ${LINES} stderr line(s), the last matching "
    "[wrapir: error: .*${ERROR}], got:\n${_shown}")
endif()
