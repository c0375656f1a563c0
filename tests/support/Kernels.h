//===- Kernels.h - The test kernels, shipped and local ----------*- C++ -*-===//
//
// Each kernel source in tests/kernels is built twice: into KERNEL_DIR/<file>.o,
// shipped to the executor, where its entries are _catalyst_pyface_<name>, and
// into the tests as host_<file>_<name>, so a launch can be checked against the
// same code run here.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_KERNELS_H
#define CATALYST_REMOTE_TESTS_KERNELS_H

#include <string>

namespace catalyst::remote::test {

using PyfaceEntry = void (*)(void *Rv, void *Av);

// The shipped object for kernel source File (e.g. "map" -> ".../map.o").
std::string kernelObject(const std::string &File);

// The remote entry symbol for Name.
std::string remoteEntry(const std::string &Name);

// The local copy of File's entry Name; null when there is none.
PyfaceEntry hostEntry(const std::string &File, const std::string &Name);

// "map_r2_e8" and friends.
std::string rankSizeEntry(const std::string &Kernel, size_t Rank, size_t ElemSize);

inline constexpr size_t ElemSizes[] = {1, 2, 4, 8, 16};
inline constexpr size_t MaxTestRank = 4;

} // namespace catalyst::remote::test

#endif
