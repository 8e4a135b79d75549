# cmake -P script: expr commands given very long arguments (issue 12) fail
# with one short diagnostic line. The messages of the parser, evaluator and
# solver quote the expression, and the solver lists its symbols: a 94 KB sum
# once made a 200 KB error line. Each command line here must exit 1 with
# nothing on stdout and one stderr line of at most MAX_LINE characters.
#
# Variables: EXE.
set(MAX_LINE 600)

# s0 + s1 + ... + s2999: about 27 KB, under the kernel's 128 KiB per argument.
set(_terms "")
foreach(_i RANGE 2999)
  list(APPEND _terms "s${_i}")
endforeach()
list(JOIN _terms " + " _sum)
string(REPEAT "n" 20000 _long_name)

set(_failures "")
function(expect_short_error label regex)
  execute_process(COMMAND "${EXE}" ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err TIMEOUT 20)
  string(LENGTH "${_err}" _length)
  string(REGEX MATCHALL "\n" _newlines "${_err}")
  list(LENGTH _newlines _lines)
  string(SUBSTRING "${_err}" 0 300 _head)
  string(REGEX REPLACE "\n$" "" _line "${_err}")
  if(NOT _rc EQUAL 1 OR NOT _out STREQUAL "" OR NOT _lines EQUAL 1 OR _length GREATER ${MAX_LINE}
     OR NOT _line MATCHES "^wrapir: error: " OR NOT _line MATCHES "${regex}")
    set(_failures "${_failures}\n${label}: exit ${_rc}, ${_lines} stderr lines, ${_length} characters, "
      "expected one line of at most ${MAX_LINE} matching [${regex}]: ${_head}" PARENT_SCOPE)
  endif()
endfunction()

expect_short_error("solve, underdetermined" "underdetermined: `s0 [+] s1 .*[.][.][.]` has 3000 unknowns [(]'s5', .* and 2992 more[)]; one equation determines only one$" expr solve --for s5 "${_sum}" 100)
expect_short_error("solve, the value uses the unknown" "[.][.][.]` uses the unknown 's5'$" expr solve --for s5 "s5" "${_sum}")
expect_short_error("solve, unknown absent" "'zz' does not occur in 's0 [+] s1 .*[.][.][.]'$" expr solve --for zz "${_sum}" 1)
expect_short_error("simplify, parse error at the end" "cannot parse expression" expr simplify "${_sum} +")
expect_short_error("eval, unbound symbol" "cannot evaluate: unbound symbol" expr eval "${_sum}" s0=1)
expect_short_error("eval, a long name" "is not a valid symbol name$" expr eval 1 "${_long_name}=0")

if(NOT _failures STREQUAL "")
  message(FATAL_ERROR "long arguments made long or wrong diagnostics:${_failures}")
endif()
