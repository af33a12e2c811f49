# Golden test of dsm-pass: the descriptors (--emit-rsd JSON, diagnostics included) of
# SRC must equal EXPECTED; a loop with an error must make the pass fail, and otherwise the
# rewritten source must compile with the host compiler.
#   cmake -DPASS=... -DSRC=... -DEXPECTED=... -DCXX=... -DFLAGS="a;b" -DWORK=dir -P check_golden.cmake
# With -DUPDATE=1 (or DSM_UPDATE_GOLDEN=1 in the environment) EXPECTED is rewritten instead.
get_filename_component(dir ${SRC} DIRECTORY)
get_filename_component(name ${SRC} NAME)
execute_process(COMMAND ${PASS} --emit-rsd ${name} -- ${FLAGS}
  WORKING_DIRECTORY ${dir} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(UPDATE OR "$ENV{DSM_UPDATE_GOLDEN}")
  file(WRITE ${EXPECTED} "${out}")
  message(STATUS "updated ${EXPECTED}")
  return()
endif()
file(READ ${EXPECTED} want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "descriptors of ${name} differ from ${EXPECTED}\n--- got:\n${out}\n--- stderr:\n${err}")
endif()
string(FIND "${want}" "\"severity\": \"error\"" has_error)
if(has_error GREATER -1)
  if(rc EQUAL 0)
    message(FATAL_ERROR "dsm-pass accepted ${name} although it reports an error")
  endif()
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dsm-pass failed on ${name} (${rc}):\n${err}")
endif()
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${PASS} ${name} -o ${WORK}/${name} -- ${FLAGS}
  WORKING_DIRECTORY ${dir} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dsm-pass could not rewrite ${name}:\n${err}")
endif()
execute_process(COMMAND ${CXX} -fsyntax-only -Wall -Wextra -Wno-unused-parameter -Werror ${FLAGS} ${WORK}/${name}
  WORKING_DIRECTORY ${dir} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the rewritten ${name} does not compile:\n${err}")
endif()
