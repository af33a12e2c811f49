# Compiles a PolyBench original (MEDIUM data set, arrays dumped) and requires the port's
# sequential build to print the same dump (the original prints it on standard error, the
# port on standard output).
#   cmake -DCC=gcc -DORIGINAL=.../bicg.c -DUTILITIES=.../utilities -DPORT=pb_bicg_plain -DWORK=dir
#         -P compare_original.cmake
file(MAKE_DIRECTORY ${WORK})
get_filename_component(dir ${ORIGINAL} DIRECTORY)
execute_process(COMMAND ${CC} -O2 -ffp-contract=off -DMEDIUM_DATASET -DPOLYBENCH_DUMP_ARRAYS -I${UTILITIES} -I${dir}
                        ${UTILITIES}/polybench.c ${ORIGINAL} -lm -o ${WORK}/original
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot compile ${ORIGINAL}:\n${err}")
endif()
execute_process(COMMAND ${WORK}/original ERROR_VARIABLE want RESULT_VARIABLE rc TIMEOUT 120)
if(NOT rc EQUAL 0 OR want STREQUAL "")
  message(FATAL_ERROR "${ORIGINAL} failed (${rc})")
endif()
execute_process(COMMAND ${PORT} OUTPUT_VARIABLE got RESULT_VARIABLE rc TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PORT} failed (${rc})")
endif()
if(NOT got STREQUAL want)
  string(LENGTH "${want}" nw)
  string(LENGTH "${got}" ng)
  message(FATAL_ERROR "the port's dump differs from the original's (${ng} bytes against ${nw})")
endif()
message(STATUS "same dump as the original")
