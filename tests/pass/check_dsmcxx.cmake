# dsmc++ end to end (see CMakeLists.txt). Arguments: DSMCXX, SRC (tests/pass), SEQ (the
# plain-compiled kernels program), WORK (scratch folder).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
function(must)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()
# Runs a command that must fail; its stderr goes to `err`.
function(must_fail why)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${why}: ${ARGN}")
  endif()
  set(err "${err}" PARENT_SCOPE)
endfunction()
function(expect_in text what)
  string(FIND "${text}" "${what}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected '${what}' in:\n${text}")
  endif()
endfunction()

must(${SEQ})
set(want "${out}")
# Flags before and after the source, then -c and a separate link.
must(${DSMCXX} -O2 ${SRC}/run/kernels.cpp -Wall -o kernels -DUNUSED=1)
must(${WORK}/kernels)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "dsmc++-built program differs from the sequential one:\n${out}\nversus\n${want}")
endif()
must(${DSMCXX} -c ${SRC}/run/kernels.cpp -O1)
must(${DSMCXX} kernels.o -o kernels2)
must(${WORK}/kernels2)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "separately compiled and linked program differs from the sequential one")
endif()

# --show runs nothing and prints the pass, the compiler and libdsm's link flags.
must(${DSMCXX} --show ${SRC}/run/kernels.cpp -o never)
expect_in("${out}" "dsm-pass")
expect_in("${out}" "libdsm.a")
if(EXISTS ${WORK}/never)
  message(FATAL_ERROR "--show built the program")
endif()
# A source without marked loops goes through the pass too: a header it includes may hold one.
must(${DSMCXX} --show -c ${SRC}/golden/nomarks.cpp)
expect_in("${out}" "dsm-pass")

# A marked loop in an included header is an error (compiled without the pass, every rank
# would run all of it), also when the source itself never mentions the pragma.
file(WRITE ${WORK}/loop.hpp "inline void clear(double* sh_a, long n) {\n#pragma dsm parallel for\n  for (long i = 0; i < n; ++i) sh_a[i] = 0;\n}\n")
file(WRITE ${WORK}/uses_header.cpp "#include <dsm/dsm.hpp>\n#include \"loop.hpp\"\nint main() { return 0; }\n")
must_fail("dsmc++ compiled a marked loop in a header without the pass" ${DSMCXX} -c uses_header.cpp)
expect_in("${err}" "loop.hpp:2:")
expect_in("${err}" "included file")

# An unmarked source, compiled from the pass's output, still has its own name in messages
# and in __FILE__.
file(WRITE ${WORK}/plain.cpp "#include <cstdio>\nint main() {\n  int unused_here = 0;\n  std::puts(__FILE__);\n}\n")
must(${DSMCXX} -Wall plain.cpp -o plain)
expect_in("${err}" "plain.cpp:3:")
string(FIND "${err}" "dsmc++." at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "a warning points at dsmc++'s temporary copy:\n${err}")
endif()
must(${WORK}/plain)
if(NOT out STREQUAL "plain.cpp\n")
  message(FATAL_ERROR "__FILE__ of an unmarked source is '${out}', not plain.cpp")
endif()

# Errors and warnings point at the user's file and line, before and after the pass.
file(WRITE ${WORK}/bad.cpp "#include <dsm/dsm.hpp>\nvoid f(double* sh_a, long n) {\n#pragma dsm parallel for\n  for (long i = 0; i < n; ++i)\n    sh_a[i] = 1.0\n}\n")
must_fail("dsmc++ accepted a syntax error" ${DSMCXX} -c bad.cpp)
expect_in("${err}" "bad.cpp:5:")
file(WRITE ${WORK}/warn.cpp "#include <dsm/dsm.hpp>\nvoid f(double* sh_a, long n) {\n#pragma dsm parallel for\n  for (long i = 0; i < n; ++i) {\n    sh_a[i] = 1.0;\n\n    int unused_here = 0;\n  }\n}\n")
must(${DSMCXX} -Wall -c warn.cpp)
expect_in("${err}" "warn.cpp:7:")
