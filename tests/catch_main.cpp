// Catch2's main, compiled once for every unit-test program: its implementation takes about
// 20 s to compile, which each program that defined CATCH_CONFIG_MAIN paid again.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
