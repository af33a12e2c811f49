# Runs CMD and requires its exit status 0, each text of EXPECT in its output, and no match of
# the regular expression REJECT (optional; [^\n] in it stays on one line).
#   cmake "-DCMD=prog;arg;..." "-DEXPECT=text 1;text 2" [-DREJECT=regex] -P expect_output.cmake
execute_process(COMMAND ${CMD} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 90)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CMD} failed (${rc}):\n${out}\n${err}")
endif()
foreach(line ${EXPECT})
  string(FIND "${out}" "${line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected '${line}' in the output of ${CMD}:\n${out}")
  endif()
endforeach()
if(REJECT)
  string(REPLACE "\\n" "\n" regex "${REJECT}")  # [^\n] in REJECT: not past the end of a line
  string(REGEX MATCH "${regex}" bad "${out}")
  if(bad)
    message(FATAL_ERROR "unexpected '${bad}' in the output of ${CMD}:\n${out}")
  endif()
endif()
