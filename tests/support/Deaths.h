//===- Deaths.h - How each of the deaths kernel's entries is named -*- C++ -*-===//
//
// tests/kernels/deaths.c kills its connection process in every way a kernel
// can; the host's error must name the signal or the exit status.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_DEATHS_H
#define CATALYST_REMOTE_TESTS_DEATHS_H

namespace catalyst::remote::test {

struct Death {
  const char *Entry;
  const char *Named; // what the error must say
};

inline constexpr Death Deaths[] = {
    {"die_segv", "signal 11 (Segmentation fault)"},
    {"die_bus", "signal 7 (Bus error)"},
    {"die_fpe", "signal 8 (Floating point exception)"},
    {"die_ill", "signal 4 (Illegal instruction)"},
    {"die_abort", "signal 6 (Aborted)"},
    {"die_stack", "signal 11 (Segmentation fault)"},
    {"die_exit", "exited with status 3"},
    {"die__exit", "exited with status 4"},
};

} // namespace catalyst::remote::test

#endif
