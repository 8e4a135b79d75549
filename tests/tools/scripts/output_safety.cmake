# cmake -P script: `-o` and `--timeline` write through a fresh temporary
# file and a rename and never follow a symbolic link (tools/wrapir/file_io.hpp).
#
# Regression: the tool wrote OUT.tmp with ofstream and renamed it over OUT,
# so a symbolic link planted at OUT.tmp made it overwrite the link's target.
#
# Variables: EXE, PROGRAMS (tests/tools/programs), DIR (a scratch folder).
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
file(WRITE "${DIR}/victim" "precious\n")

set(_failures "")
function(_expect condition message)
  if(NOT ${condition})
    set(_failures "${_failures}\n  ${message}" PARENT_SCOPE)
  endif()
endfunction()
# _wrapir(<rc var> <stderr var> <arg>...)
function(_wrapir rc_var err_var)
  execute_process(COMMAND "${EXE}" ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err TIMEOUT 20)
  set(${rc_var} "${_rc}" PARENT_SCOPE)
  set(${err_var} "${_err}" PARENT_SCOPE)
endfunction()
macro(_check_victim when)
  file(READ "${DIR}/victim" _victim)
  if(NOT _victim STREQUAL "precious\n")
    set(_failures "${_failures}\n  ${when}: the link's target was overwritten: [${_victim}]")
  endif()
endmacro()

# 1. A link planted at the old temporary name of -o.
file(CREATE_LINK "${DIR}/victim" "${DIR}/out.py.tmp" SYMBOLIC)
_wrapir(rc err emit --target python "${PROGRAMS}/add_relu.json" -o "${DIR}/out.py")
if(NOT rc EQUAL 0)
  set(_failures "${_failures}\n  emit -o: exit ${rc}, stderr [${err}]")
endif()
_check_victim("emit -o next to a planted out.py.tmp link")
file(READ "${DIR}/out.py" _written)
file(READ "${PROGRAMS}/add_relu.py" _golden)
if(NOT _written STREQUAL _golden)
  set(_failures "${_failures}\n  emit -o: out.py differs from add_relu.py")
endif()
if(NOT IS_SYMLINK "${DIR}/out.py.tmp")
  set(_failures "${_failures}\n  emit -o: the planted link out.py.tmp was removed or replaced")
endif()

# 2. The same for --timeline, and -o of plan.
file(CREATE_LINK "${DIR}/victim" "${DIR}/timeline.svg.tmp" SYMBOLIC)
file(CREATE_LINK "${DIR}/victim" "${DIR}/plan.json.tmp" SYMBOLIC)
_wrapir(rc err plan --strategy arena "${PROGRAMS}/add_relu.json" -o "${DIR}/plan.json" --timeline "${DIR}/timeline.svg")
if(NOT rc EQUAL 0)
  set(_failures "${_failures}\n  plan -o --timeline: exit ${rc}, stderr [${err}]")
endif()
_check_victim("plan --timeline next to planted links")
file(READ "${DIR}/plan.json" _written)
file(READ "${PROGRAMS}/add_relu.arena.json" _golden)
if(NOT _written STREQUAL _golden)
  set(_failures "${_failures}\n  plan -o: plan.json differs from add_relu.arena.json")
endif()
file(READ "${DIR}/timeline.svg" _svg LIMIT 200)
if(NOT _svg MATCHES "<svg")
  set(_failures "${_failures}\n  plan --timeline: timeline.svg is not an SVG: [${_svg}]")
endif()

# 3. Targets that are not regular files are refused, whatever they are;
#    the link's target stays as it was and nothing is left behind.
file(CREATE_LINK "${DIR}/victim" "${DIR}/link.py" SYMBOLIC)
file(MAKE_DIRECTORY "${DIR}/a_directory")
execute_process(COMMAND mkfifo "${DIR}/fifo" RESULT_VARIABLE _mkfifo)
foreach(_case "link.py|it is a symbolic link, not a regular file; refusing to replace it"
              "a_directory|it is a directory"
              "fifo|it is a FIFO, not a regular file; refusing to replace it"
              "missing_dir/out.py|cannot create a temporary file in")
  string(REPLACE "|" ";" _case "${_case}")
  list(GET _case 0 _target)
  list(GET _case 1 _why)
  foreach(_option -o --timeline)
    if(_option STREQUAL "-o")
      _wrapir(rc err emit --target python "${PROGRAMS}/add_relu.json" -o "${DIR}/${_target}")
    else()
      _wrapir(rc err plan --strategy reuse "${PROGRAMS}/add_relu.json" -o "${DIR}/ok.json" --timeline "${DIR}/${_target}")
    endif()
    string(REGEX MATCHALL "\n" _newlines "${err}")
    list(LENGTH _newlines _lines)
    string(FIND "${err}" "${_why}" _at)
    if(NOT rc EQUAL 1 OR NOT _lines EQUAL 1 OR _at LESS 0)
      set(_failures "${_failures}\n  ${_option} ${_target}: expected exit 1 and one line with [${_why}], got exit ${rc}, stderr [${err}]")
    endif()
  endforeach()
endforeach()
_check_victim("-o/--timeline at a link")
if(NOT IS_SYMLINK "${DIR}/link.py")
  set(_failures "${_failures}\n  -o link.py: the link was replaced")
endif()

# 4. No temporary file is left anywhere.
file(GLOB _left LIST_DIRECTORIES true RELATIVE "${DIR}" "${DIR}/*" "${DIR}/.*" "${DIR}/a_directory/*" "${DIR}/a_directory/.*")
list(SORT _left)
set(_expected a_directory fifo link.py out.py out.py.tmp plan.json plan.json.tmp timeline.svg timeline.svg.tmp victim)
if(NOT _mkfifo EQUAL 0)
  list(REMOVE_ITEM _expected fifo)
endif()
if(NOT _left STREQUAL _expected)
  set(_failures "${_failures}\n  files left: [${_left}], expected [${_expected}]")
endif()

if(_failures)
  message(FATAL_ERROR "output safety:${_failures}")
endif()
