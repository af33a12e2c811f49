# Runs CMD and requires its exit status 0 and each of the lines EXPECT in its output.
#   cmake "-DCMD=prog;arg;..." "-DEXPECT=text 1;text 2" -P expect_output.cmake
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
