//===- MemoryBudgetTest.cpp - What one host may make its executor reserve -===//
//
// executor/MemoryBudget.h in process: takes count up to the cap and no
// further, a refusal names what was asked, the cap and the option that
// sets it, and takes nothing; gives come back, never below zero; takes
// from many threads at once never pass the cap together.
//
//===----------------------------------------------------------------------===//

#include "../../executor/MemoryBudget.h"

#include "gtest/gtest.h"
#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace catalyst::remote::executor;

namespace {

constexpr uint64_t MiB = 1 << 20;

TEST(MemoryBudgetTest, TakesCountUpToTheCapAndNoFurther) {
  MemoryBudget B;
  B.setCap(10 * MiB);
  EXPECT_FALSE(bool(B.take(6 * MiB, "a launch slab")));
  EXPECT_FALSE(bool(B.take(4 * MiB, "executor memory")));
  EXPECT_EQ(B.used(), 10 * MiB);
  llvm::Error Err = B.take(1, "the shared mailbox");
  ASSERT_TRUE(bool(Err));
  std::string Why = llvm::toString(std::move(Err));
  EXPECT_NE(Why.find("cannot reserve the shared mailbox of 1 bytes"), std::string::npos) << Why;
  EXPECT_NE(Why.find("already holds 10 MiB"), std::string::npos) << Why;
  EXPECT_NE(Why.find("cap of 10 MiB (--max-slab-mib)"), std::string::npos) << Why;
  EXPECT_EQ(B.used(), 10 * MiB) << "a refusal takes nothing";
  B.give(4 * MiB);
  EXPECT_EQ(B.used(), 6 * MiB);
  EXPECT_FALSE(bool(B.take(4 * MiB, "a launch slab")));
}

TEST(MemoryBudgetTest, NothingPastTheCapEvenAtTheEdgeOfTheCount) {
  MemoryBudget B;
  B.setCap(8 * MiB);
  llvm::Error Huge = B.take(UINT64_MAX, "a launch slab");
  EXPECT_TRUE(bool(Huge));
  llvm::consumeError(std::move(Huge)); // its message is the first test's
  EXPECT_EQ(B.used(), 0u);
  EXPECT_FALSE(bool(B.take(8 * MiB, "a launch slab")));
  llvm::Error One = B.take(1, "a launch slab");
  EXPECT_TRUE(bool(One)) << "full: one byte more is refused";
  llvm::consumeError(std::move(One));
  B.give(16 * MiB);
  EXPECT_EQ(B.used(), 0u) << "giving back more than was taken stops at zero";
}

TEST(MemoryBudgetTest, ThreadsTakingAtOnceNeverPassTheCapTogether) {
  MemoryBudget B;
  B.setCap(100 * MiB);
  std::atomic<int> Granted{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&] {
      for (int I = 0; I < 100; ++I) {
        if (llvm::Error Err = B.take(MiB, "a launch slab"))
          llvm::consumeError(std::move(Err)); // full: what this test counts
        else
          ++Granted;
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Granted.load(), 100);
  EXPECT_EQ(B.used(), 100 * MiB);
}

} // namespace
