//===- RetentionTest.cpp - A kernel's large output, faulted in once -------===//
//
// concat_1 mallocs a fresh output as large as its input on every launch.
// Without retention each launch faults that output in page by page; with
// it (the default), the block freed by one launch comes back to the next
// still faulted in. Counted in the connection process's minor faults, over
// a launch after two that warmed everything else (slab, code, buffers).
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Procfs.h"

#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

constexpr int64_t OutputBytes = 64 << 20;

// Minor faults the connection process took in its third launch.
::testing::AssertionResult faultsOfAWarmLaunch(const ExecutorOptions &EO, int64_t &Faults) {
  ExecutorProcess Exec;
  if (auto Started = Exec.start(EO); !Started)
    return Started;
  auto Sess = openWithConcat(Exec.address(), Strategy::ZeroCopy);
  std::vector<pid_t> Pids;
  if (!Sess || !Exec.waitForConnections(1, Pids, 5s))
    return ::testing::AssertionFailure() << "no session";
  std::mt19937_64 Rng(3);
  auto Ins = byteInputs({OutputBytes}, Rng);
  for (int Warm = 0; Warm < 2; ++Warm)
    if (auto R = concatMatches(*Sess, Ins); !R)
      return R;
  int64_t Before = minorFaults(Pids[0]);
  if (auto R = concatMatches(*Sess, Ins); !R)
    return R;
  Faults = minorFaults(Pids[0]) - Before;
  return ::testing::AssertionSuccess();
}

bool hugePagesAlways() {
  return readFile("/sys/kernel/mm/transparent_hugepage/enabled").find("[always]") !=
         std::string::npos;
}

TEST(RetentionTest, ARepeatedLargeOutputIsFaultedInOnce) {
#ifdef CATALYST_REMOTE_SANITIZED
  GTEST_SKIP() << "a sanitizer's malloc replaces mimalloc's, whose arena keeps the memory";
#endif
  int64_t Pages = OutputBytes / ::sysconf(_SC_PAGESIZE);
  int64_t Kept = -1, Fresh = -1;
  ASSERT_TRUE(faultsOfAWarmLaunch({}, Kept));
  EXPECT_LT(Kept, Pages / 8) << "the output came back faulted in";
  ExecutorOptions None;
  None.Args = {"--retain-mib", "0"};
  ASSERT_TRUE(faultsOfAWarmLaunch(None, Fresh));
  if (hugePagesAlways())
    GTEST_SKIP() << "with transparent huge pages always on, fresh memory faults in 2 MiB at a "
                    "time: nothing to compare";
  EXPECT_GE(Fresh, Pages / 2) << "without retention, every launch faults its output in";
}

} // namespace
