# cmake -P script: `wrapir --help` lists every option a command accepts.
# run-cpp accepted --no-verify, and its own error message suggested it, but
# its usage entry did not name it (issue 12).
#
# Variables: EXE, COMMAND (e.g. run-cpp), OPTIONS (the options its usage
# entry must name, separated by |).
execute_process(COMMAND "${EXE}" --help RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "wrapir --help exited with ${_rc}: ${_err}")
endif()
# The entry: the line "wrapir COMMAND ..." and the lines continuing it,
# indented deeper than the next command's "       wrapir ".
string(FIND "${_out}" "wrapir ${COMMAND} " _start)
if(_start EQUAL -1)
  message(FATAL_ERROR "wrapir --help has no entry for ${COMMAND}:\n${_out}")
endif()
string(SUBSTRING "${_out}" ${_start} -1 _rest)
string(REGEX MATCH "^[^\n]*(\n         [^\n]*)*" _entry "${_rest}")
string(REPLACE "|" ";" _options "${OPTIONS}")
foreach(_option IN LISTS _options)
  string(FIND "${_entry}" "${_option}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "the usage of ${COMMAND} does not name ${_option}:\n${_entry}")
  endif()
endforeach()
