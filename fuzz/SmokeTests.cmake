# The test suite runs every fuzzer for a short, bounded time: tools/fuzz
# builds them (clang-22, sanitizers) in a directory of its own, then each
# runs its committed corpus (reproducers of past crashes included) and
# fuzzes for CATALYST_REMOTE_FUZZ_SECONDS. The build runs alone (it takes
# every core); each fuzzer is one process on one core, beside one other test
# as any test is: alone, each left a core idle for its whole run.
include(${CMAKE_CURRENT_LIST_DIR}/Fuzzers.cmake)
set(CATALYST_REMOTE_FUZZ_SECONDS 15 CACHE STRING "How long the test suite runs each fuzzer")
set(FUZZ_BUILD_DIR ${CMAKE_BINARY_DIR}/fuzz)
set(FUZZ_TOOL ${PROJECT_SOURCE_DIR}/tools/fuzz)
add_test(NAME fuzz.build COMMAND ${FUZZ_TOOL} --build-dir ${FUZZ_BUILD_DIR} --build-only)
set_tests_properties(fuzz.build PROPERTIES FIXTURES_SETUP fuzzers LABELS fuzz TIMEOUT 1800
  RUN_SERIAL TRUE)
foreach(F IN LISTS CATALYST_REMOTE_FUZZERS)
  add_test(NAME fuzz.${F} COMMAND ${FUZZ_TOOL} --build-dir ${FUZZ_BUILD_DIR} --no-build
    ${CATALYST_REMOTE_FUZZ_SECONDS} ${F})
  set_tests_properties(fuzz.${F} PROPERTIES FIXTURES_REQUIRED fuzzers LABELS fuzz TIMEOUT 300
    PROCESSORS 1)
endforeach()
