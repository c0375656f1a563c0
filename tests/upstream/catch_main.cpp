// Catch2's main for Catalyst's Test_Executor.cpp, in a translation unit of
// its own as Catch2 2 wants it (Debian ships Catch2 2.13; the test is
// written for Catch2 3, whose catch_test_macros.hpp a header generated in the
// build directory stands in for).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
