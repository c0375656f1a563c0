//===- Kernels.cpp - The test kernels, shipped and local ------------------===//

#include "Kernels.h"

#include <map>

// One row per rank reads better than a reflowed list.
// clang-format off
#define RANKS_AND_SIZES(M, K)                                                                      \
  M(K, 0, 1) M(K, 0, 2) M(K, 0, 4) M(K, 0, 8) M(K, 0, 16)                                          \
  M(K, 1, 1) M(K, 1, 2) M(K, 1, 4) M(K, 1, 8) M(K, 1, 16)                                          \
  M(K, 2, 1) M(K, 2, 2) M(K, 2, 4) M(K, 2, 8) M(K, 2, 16)                                          \
  M(K, 3, 1) M(K, 3, 2) M(K, 3, 4) M(K, 3, 8) M(K, 3, 16)                                          \
  M(K, 4, 1) M(K, 4, 2) M(K, 4, 4) M(K, 4, 8) M(K, 4, 16)
// clang-format on

// concat_0 .. concat_16, one entry per input count.
#define CONCAT_COUNTS(M)                                                                           \
  M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15) M(16)

#define DECLARE_RANK_SIZE(K, R, E) void host_##K##_##K##_r##R##_e##E(void *, void *);
#define DECLARE(FILE, NAME) void host_##FILE##_##NAME(void *, void *);
#define DECLARE_CONCAT(N) DECLARE(concat, concat_##N)

extern "C" {
RANKS_AND_SIZES(DECLARE_RANK_SIZE, map)
RANKS_AND_SIZES(DECLARE_RANK_SIZE, relayout)
DECLARE(reverse, reverse_r1_e2)
DECLARE(reverse, reverse_r2_e8)
DECLARE(multi, multi)
DECLARE(constant, constant)
DECLARE(alias, alias_split)
DECLARE(alias, alias_input)
DECLARE(same_name_a, same_name)
DECLARE(same_name_b, same_name)
CONCAT_COUNTS(DECLARE_CONCAT)
}

namespace catalyst::remote::test {

namespace {

#define ROW_RANK_SIZE(K, R, E) {#K ":" #K "_r" #R "_e" #E, &host_##K##_##K##_r##R##_e##E},
#define ROW(FILE, NAME) {#FILE ":" #NAME, &host_##FILE##_##NAME},
#define ROW_CONCAT(N) ROW(concat, concat_##N)

const std::map<std::string, PyfaceEntry> &hostEntries() {
  // clang-format off
  static const std::map<std::string, PyfaceEntry> Entries = {
      RANKS_AND_SIZES(ROW_RANK_SIZE, map) RANKS_AND_SIZES(ROW_RANK_SIZE, relayout)
      ROW(reverse, reverse_r1_e2) ROW(reverse, reverse_r2_e8) ROW(multi, multi)
      ROW(constant, constant) ROW(alias, alias_split) ROW(alias, alias_input)
      ROW(same_name_a, same_name) ROW(same_name_b, same_name)
      CONCAT_COUNTS(ROW_CONCAT)};
  // clang-format on
  return Entries;
}

} // namespace

std::string kernelObject(const std::string &File) {
  return KERNEL_DIR "/" + File + ".o";
}

std::string remoteEntry(const std::string &Name) {
  return "_catalyst_pyface_" + Name;
}

PyfaceEntry hostEntry(const std::string &File, const std::string &Name) {
  auto It = hostEntries().find(File + ":" + Name);
  return It == hostEntries().end() ? nullptr : It->second;
}

std::string rankSizeEntry(const std::string &Kernel, size_t Rank, size_t ElemSize) {
  return Kernel + "_r" + std::to_string(Rank) + "_e" + std::to_string(ElemSize);
}

} // namespace catalyst::remote::test
