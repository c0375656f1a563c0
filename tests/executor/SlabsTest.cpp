//===- SlabsTest.cpp - Launch slabs and the budget they count against -----===//
//
// executor/Slabs.h in process, with a MemoryBudget of the test's own: a
// slab is 2 MiB aligned and counted, whole, against the budget until it is
// released; the budget refuses what would pass its cap, naming it; a place
// is inside a slab only when all of it is; a shared slab is a memfd whose
// bytes are the slab's, and only it passes containsShared().
//
//===----------------------------------------------------------------------===//

#include "../../executor/Slabs.h"

#include "gtest/gtest.h"
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace catalyst::remote::executor;

namespace {

constexpr uint64_t MiB = 1 << 20;

std::string messageOf(llvm::Error Err) {
  return Err ? llvm::toString(std::move(Err)) : std::string();
}

TEST(SlabsTest, ASlabCountsAgainstTheBudgetUntilReleased) {
  MemoryBudget Budget;
  Budget.setCap(16 * MiB);
  Slabs S(Budget);
  auto A = S.reserve(MiB);
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*A) % (2 * MiB), 0u) << "2 MiB aligned";
  // Its 2 MiB, and as much again to align it.
  EXPECT_EQ(Budget.used(), 4 * MiB);
  std::memset(*A, 0x5a, 2 * MiB); // all of it is there to write
  {
    auto Held = S.hold();
    EXPECT_TRUE(Held.contains(*A, 2 * MiB));
    EXPECT_TRUE(Held.contains(*A + MiB, MiB));
    EXPECT_FALSE(Held.contains(*A + MiB, MiB + 1)) << "one byte past its end";
    EXPECT_FALSE(Held.contains(*A - 1, 2));
    EXPECT_FALSE(Held.containsShared(*A, 1)) << "not a shared slab";
  }
  EXPECT_NE(messageOf(S.release(*A + 1)).find("is not a slab of this session"), std::string::npos);
  EXPECT_EQ(messageOf(S.release(*A)), "");
  EXPECT_EQ(Budget.used(), 0u);
  EXPECT_FALSE(S.hold().contains(*A, 1)) << "released";
}

TEST(SlabsTest, TheBudgetRefusesASlabPastItsCapNamingIt) {
  MemoryBudget Budget;
  Budget.setCap(8 * MiB);
  Slabs S(Budget);
  auto A = S.reserve(4 * MiB); // 6 MiB with its alignment
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  auto B = S.reserve(MiB);
  ASSERT_FALSE(bool(B));
  std::string Why = llvm::toString(B.takeError());
  EXPECT_NE(Why.find("cannot reserve a launch slab"), std::string::npos) << Why;
  EXPECT_NE(Why.find("--max-slab-mib"), std::string::npos) << Why;
  EXPECT_EQ(Budget.used(), 6 * MiB) << "a refused slab takes nothing";
  for (uint64_t Bytes : {uint64_t(0), (uint64_t(1) << 46) + 1}) {
    auto C = S.reserve(Bytes);
    ASSERT_FALSE(bool(C)) << Bytes;
    EXPECT_NE(llvm::toString(C.takeError()).find("cannot reserve a slab of"), std::string::npos);
  }
  EXPECT_EQ(messageOf(S.release(*A)), "");
}

TEST(SlabsTest, ASharedSlabIsAMemfdWithTheSlabsBytes) {
  MemoryBudget Budget;
  Slabs S(Budget);
  int Fd = -1;
  uint64_t Usable = 0;
  auto A = S.reserveShared(3 * MiB, Fd, Usable);
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  ASSERT_GE(Fd, 0);
  EXPECT_EQ(Usable, 4 * MiB) << "rounded up to 2 MiB";
  void *Other = ::mmap(nullptr, Usable, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
  ASSERT_NE(Other, MAP_FAILED);
  std::memset(Other, 0x33, Usable);
  EXPECT_EQ((*A)[0], 0x33);
  EXPECT_EQ((*A)[Usable - 1], 0x33);
  {
    auto Held = S.hold();
    EXPECT_TRUE(Held.containsShared(*A, Usable));
    EXPECT_FALSE(Held.containsShared(*A, Usable + 1));
  }
  ::munmap(Other, Usable);
  ::close(Fd);
  EXPECT_EQ(messageOf(S.release(*A)), "");
  EXPECT_EQ(Budget.used(), 0u);
}

} // namespace
