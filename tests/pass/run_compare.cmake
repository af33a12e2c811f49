# Runs the plain-compiled program (sequential reference) and the pass-compiled program at
# every rank count of RANKS (through DSMRUN when given, else directly at 1 rank), and
# requires identical output.
#   cmake -DSEQ=... -DPAR=... -DRANKS="1;2" [-DDSMRUN=...] [-DDSMRUN_ARGS="--provider;tcp"] [-DARGS="..."]
#         -P run_compare.cmake
execute_process(COMMAND ${SEQ} ${ARGS} OUTPUT_VARIABLE want RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0 OR want STREQUAL "")
  message(FATAL_ERROR "sequential reference ${SEQ} failed (${rc})")
endif()
foreach(n ${RANKS})
  if(DSMRUN)
    set(cmd ${DSMRUN} -n ${n} ${DSMRUN_ARGS} --timeout 60 -- ${PAR} ${ARGS})
  elseif(n EQUAL 1)
    set(cmd ${PAR} ${ARGS})
  else()
    message(STATUS "no dsmrun: ${n} ranks skipped")
    continue()
  endif()
  execute_process(COMMAND ${cmd} OUTPUT_VARIABLE got ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 90)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${n} ranks: ${cmd} failed (${rc}):\n${err}")
  endif()
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${n} ranks: result differs from the sequential one\n--- sequential:\n${want}\n--- ${n} ranks:\n${got}")
  endif()
  message(STATUS "${n} ranks: same result as sequential")
endforeach()
