# cmake -P script: makes the hostile inputs of the cli.hostile.* tests in DIR
# (tests/tools/CMakeLists.txt): files that are not regular files, files too
# large or malformed to load, and links that loop. Run once per ctest run as
# the fixture `cli_hostile_files`.
if(NOT DIR)
  message(FATAL_ERROR "make_hostile_files.cmake: set DIR")
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}/a_directory")

function(_run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc ERROR_VARIABLE _err TIMEOUT 30)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "make_hostile_files.cmake: '${ARGN}' failed (${_rc}): ${_err}")
  endif()
endfunction()

# A FIFO nobody writes to: opening it for reading blocks unless O_NONBLOCK.
_run(mkfifo "${DIR}/fifo")
# A 2 GiB file that takes no space: over the 1 GiB default cap.
file(WRITE "${DIR}/sparse_2g" "")
_run(truncate -s 2G "${DIR}/sparse_2g")
file(WRITE "${DIR}/empty" "")
file(CREATE_LINK /dev/zero "${DIR}/link_to_dev_zero" SYMBOLIC)
file(CREATE_LINK "${DIR}/loop_b" "${DIR}/loop_a" SYMBOLIC)
file(CREATE_LINK "${DIR}/loop_a" "${DIR}/loop_b" SYMBOLIC)
file(CREATE_LINK "${DIR}/nowhere" "${DIR}/dangling_link" SYMBOLIC)

string(ASCII 255 _ff)
string(ASCII 254 _fe)
string(ASCII 1 _soh)
string(ASCII 27 _esc)
# Bytes that are not UTF-8, in the text form and inside a JSON string.
file(WRITE "${DIR}/invalid_utf8.wir" "program p${_ff}${_fe} {\n  inputs\n  outputs\n}\n")
file(WRITE "${DIR}/invalid_utf8.json" "{\"version\": 1, \"name\": \"p${_ff}${_fe}\", \"lines\": []}\n")
# Control characters where a name goes.
file(WRITE "${DIR}/control_chars.wir" "program p${_soh}${_esc}[2J {\n}\n")
# Nesting far deeper than any limit: JSON arrays, and a text-form expression.
string(REPEAT "{\"a\": [" 50000 _open)
file(WRITE "${DIR}/deep.json" "${_open}\n")
string(REPEAT "(" 100000 _parens)
string(REPEAT ")" 100000 _closing)
file(WRITE "${DIR}/deep_expression.wir"
  "program p {\n  symbol s0 : positive origin=input hint=8\n  buffer b : input float32[${_parens}s0${_closing}] strides=[1] offset=0 device=cuda:0\n}\n")
