# cmake -P script: compiles and runs every complete C++ example in a Markdown
# file, so that documentation examples cannot rot.
#
# A fenced ```cpp block that defines `int main(` is a complete program; other
# blocks are fragments and are skipped. Each program is written to OUT_DIR,
# compiled with CXX (-std=c++20 -Wall -Wextra -Werror, include dirs from
# INCLUDES, separated by |) and run; it must exit with 0.
#
# Variables: DOC (the .md file), OUT_DIR, CXX, INCLUDES, and optionally LIBS
# (libraries to link, separated by |: Boost.JSON for the JSON examples).
set(_libs "")
if(DEFINED LIBS)
  string(REPLACE "|" ";" _libs "${LIBS}")
endif()
foreach(_v DOC OUT_DIR CXX INCLUDES)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "WrapirDocSnippets: ${_v} is not set")
  endif()
endforeach()

file(READ "${DOC}" _text)
string(REPLACE ";" "\\;" _text "${_text}")
# CMake does not split a list at a ';' inside an unmatched '[': hide the
# brackets while splitting (prose like "[first, last)" is common) and put
# them back line by line.
string(REPLACE "[" "WRAPIR_LSQB" _text "${_text}")
string(REPLACE "]" "WRAPIR_RSQB" _text "${_text}")
string(REPLACE "\n" ";" _lines "${_text}")
set(_in FALSE)
set(_block "")
set(_programs 0)
set(_include_flags "")
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
foreach(_dir IN LISTS INCLUDES)
  list(APPEND _include_flags "-I${_dir}")
endforeach()
file(MAKE_DIRECTORY "${OUT_DIR}")
get_filename_component(_doc_name "${DOC}" NAME_WE)
set(_line_no 0)
foreach(_line IN LISTS _lines)
  string(REPLACE "WRAPIR_LSQB" "[" _line "${_line}")
  string(REPLACE "WRAPIR_RSQB" "]" _line "${_line}")
  math(EXPR _line_no "${_line_no} + 1")
  if(NOT _in AND _line MATCHES "^```cpp[ \t]*$")
    set(_in TRUE)
    set(_block "")
    set(_start ${_line_no})
  elseif(_in AND _line MATCHES "^```[ \t]*$")
    set(_in FALSE)
    if(_block MATCHES "int main\\(")
      math(EXPR _programs "${_programs} + 1")
      set(_src "${OUT_DIR}/${_doc_name}_${_start}.cpp")
      file(WRITE "${_src}" "${_block}")
      set(_exe "${OUT_DIR}/${_doc_name}_${_start}")
      execute_process(
        COMMAND "${CXX}" -std=c++20 -Wall -Wextra -Werror ${_include_flags} "${_src}" -o "${_exe}" ${_libs}
        RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
      if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "${DOC}:${_start}: the example does not compile:\n${_out}")
      endif()
      execute_process(COMMAND "${_exe}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
      if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "${DOC}:${_start}: the example exits with ${_rc}:\n${_out}")
      endif()
    endif()
  elseif(_in)
    string(APPEND _block "${_line}\n")
  endif()
endforeach()
if(_programs EQUAL 0)
  message(FATAL_ERROR "${DOC}: no complete example (a ```cpp block with int main) found")
endif()
message(STATUS "${DOC}: ${_programs} example(s) compiled and ran")
