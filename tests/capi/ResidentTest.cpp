//===- ResidentTest.cpp - Resident tensors through the C ABI --------------===//
//
// upload, launch_residents, fetch and release under both prefixes, in the
// zero-copy modes (TCP and the local transport): a chain of launches on
// an uploaded tensor keeps its result in the executor, the fetched values
// match the same kernels run here, and bad handles fail naming what is
// wrong, through the failure handler or as a thrown exception.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"
#include "Text.h"
#include "catalyst/remote/RemoteBindings.h"

#include <random>
#include <stdexcept>

using namespace catalyst::remote::test;

extern "C" {
int64_t __catalyst__executor__upload(int64_t, void *, size_t, size_t);
int64_t __catalyst__executor__release(int64_t);
}

namespace {

class ResidentTest : public ModeTest {
protected:
  void SetUp() override {
    ModeTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(sendKernel("concat"));
    ASSERT_NO_FATAL_FAILURE(sendKernel("copy"));
  }

  std::mt19937_64 Rng{7};
};

// A strided upload, copied and kept, then concatenated and kept, on Target
// (a session or a pool): fetched, the result is the same kernels' run here.
void checkChain(int64_t Target, std::mt19937_64 &Rng) {
  auto X = makeInput(Layout::Strided, {100000}, 1, Rng);
  int64_t Up = __catalyst__remote__upload(Target, X->D.data(), 1, 1);
  ASSERT_GT(Up, 0) << FailureLog::last();

  // copy_r1_e1(X), kept.
  void *InDescs[] = {nullptr};
  size_t One[] = {1};
  int64_t Residents[] = {Up};
  Outputs A({{1, 1}});
  auto ADescs = A.descs();
  int64_t KeptA[] = {-1};
  __catalyst__remote__launch_residents(Target, remoteEntry("copy_r1_e1").c_str(), "copy.o", 1,
                                       InDescs, One, One, 1, ADescs.data(), One, One, Residents,
                                       KeptA);
  ASSERT_EQ(FailureLog::count(), 0u) << FailureLog::last();
  ASSERT_GT(KeptA[0], 0);
  EXPECT_NE(KeptA[0], Up);
  EXPECT_EQ(A[0].allocated(), nullptr);
  EXPECT_EQ(A[0].sizes(), std::vector<int64_t>{100000});

  // concat_2(A, H), kept: the chain's bytes stay in the executor.
  auto H = makeInput(Layout::Dense, {33}, 1, Rng);
  void *ChainDescs[] = {nullptr, H->D.data()};
  size_t Ones[] = {1, 1};
  int64_t ChainResidents[] = {KeptA[0], 0};
  Outputs B({{1, 1}});
  auto BDescs = B.descs();
  int64_t KeptB[] = {1};
  __catalyst__remote__launch_residents(Target, remoteEntry("concat_2").c_str(), "concat.o", 2,
                                       ChainDescs, Ones, Ones, 1, BDescs.data(), One, One,
                                       ChainResidents, KeptB);
  ASSERT_EQ(FailureLog::count(), 0u) << FailureLog::last();
  ASSERT_GT(KeptB[0], 0);
  catalyst_remote_launch_stats Last = lastLaunch(Target);
  EXPECT_LT(Last.bytes_sent + Last.bytes_received, uint64_t(64 << 10));

  Outputs Local({{1, 1}});
  runLocal(hostEntry("concat", "concat_2"), {&X->D, &H->D}, Local);
  Desc Fetched(1, 1);
  ASSERT_EQ(__catalyst__remote__fetch(KeptB[0], Fetched.data(), 1, 1, nullptr, 0), 0)
      << FailureLog::last();
  EXPECT_EQ(Fetched.values(), Local[0].values());
  std::free(Fetched.allocated());
  std::vector<char> Mine(100033);
  Desc Lent(1, 1);
  ASSERT_EQ(__catalyst__remote__fetch(KeptB[0], Lent.data(), 1, 1, Mine.data(), Mine.size()), 0);
  EXPECT_EQ(Lent.allocated(), Mine.data());
  EXPECT_EQ(Lent.values(), Local[0].values());

  for (int64_t R : {Up, KeptA[0], KeptB[0]})
    EXPECT_EQ(__catalyst__remote__release(R), 0) << FailureLog::last();
}

TEST_P(ResidentTest, AChainKeepsItsResultInTheExecutorUntilFetched) {
  checkChain(Session.get(), Rng);
}

TEST_P(ResidentTest, BadHandlesFailNamingWhatIsWrong) {
  auto X = makeInput(Layout::Dense, {64}, 1, Rng);
  int64_t Up = __catalyst__remote__upload(Session.get(), X->D.data(), 1, 1);
  ASSERT_GT(Up, 0) << FailureLog::last();
  ASSERT_EQ(__catalyst__remote__release(Up), 0);

  EXPECT_EQ(__catalyst__remote__release(Up), -1);
  EXPECT_TRUE(mentions(FailureLog::last(), "release: resident handle " + std::to_string(Up) +
                                               " was released, or its session closed"))
      << FailureLog::last();
  EXPECT_EQ(__catalyst__remote__release(1 << 30), -1);
  EXPECT_TRUE(mentions(FailureLog::last(), "unknown resident handle")) << FailureLog::last();
  Desc Out(1, 1);
  Out.poison();
  EXPECT_EQ(__catalyst__remote__fetch(Up, Out.data(), 1, 1, nullptr, 0), -1);
  EXPECT_TRUE(Out.allZero());

  // A released input: the launch fails, its outputs zeroed, nothing kept.
  void *InDescs[] = {nullptr};
  size_t One[] = {1};
  int64_t Residents[] = {Up};
  Outputs A({{1, 1}});
  auto ADescs = A.descs();
  int64_t Kept[] = {1};
  size_t Before = FailureLog::count();
  __catalyst__remote__launch_residents(Session.get(), remoteEntry("copy_r1_e1").c_str(), "copy.o",
                                       1, InDescs, One, One, 1, ADescs.data(), One, One, Residents,
                                       Kept);
  EXPECT_EQ(FailureLog::count(), Before + 1);
  EXPECT_TRUE(mentions(FailureLog::last(), "launch_residents: input 0: resident handle"))
      << FailureLog::last();
  EXPECT_EQ(Kept[0], 0);
  EXPECT_TRUE(A[0].allZero());

  // Another session's resident (catalyst_remote_open opens a session of
  // its own, with this test's mode from the environment).
  int64_t OtherHandle = 0;
  ASSERT_EQ(catalyst_remote_open(Exec.address().c_str(), nullptr, 0, &OtherHandle), 0)
      << __catalyst__remote__last_error();
  ScopedSession Other(OtherHandle);
  int64_t Theirs = __catalyst__remote__upload(Other.get(), X->D.data(), 1, 1);
  ASSERT_GT(Theirs, 0) << FailureLog::last();
  Residents[0] = Theirs;
  __catalyst__remote__launch_residents(Session.get(), remoteEntry("copy_r1_e1").c_str(), "copy.o",
                                       1, InDescs, One, One, 1, ADescs.data(), One, One, Residents,
                                       nullptr);
  EXPECT_TRUE(mentions(FailureLog::last(), "input 0: resident handle " + std::to_string(Theirs) +
                                               " belongs to another session"))
      << FailureLog::last();

  // The other prefix throws; a closed session's residents go with it.
  EXPECT_THROW(__catalyst__executor__release(1 << 30), std::runtime_error);
  int64_t Mine = __catalyst__executor__upload(Session.get(), X->D.data(), 1, 1);
  EXPECT_GT(Mine, 0);
  Session.reset();
  EXPECT_EQ(__catalyst__remote__release(Mine), -1);
  EXPECT_TRUE(mentions(FailureLog::last(), "was released, or its session closed"))
      << FailureLog::last();
  EXPECT_EQ(__catalyst__remote__release(Theirs), 0) << "the other session's is still there";
}

// The bindings' spelling: statuses, never the failure handler.
TEST_P(ResidentTest, TheBindingsReturnTheKindOfEachFailure) {
  auto X = makeInput(Layout::Transposed, {30, 40}, 8, Rng);
  int64_t Up = 0;
  ASSERT_EQ(catalyst_remote_upload(Session.get(), X->D.data(), 2, 8, &Up), CATALYST_REMOTE_OK)
      << __catalyst__remote__last_error();
  ASSERT_GT(Up, 0);
  void *InDescs[] = {nullptr};
  size_t Two[] = {2}, Eight[] = {8};
  int64_t Residents[] = {Up};
  Outputs A({{2, 8}});
  auto ADescs = A.descs();
  int64_t Kept[] = {1};
  ASSERT_EQ(catalyst_remote_launch_residents(Session.get(), remoteEntry("copy_r2_e8").c_str(),
                                             "copy.o", 1, InDescs, Two, Eight, 1, ADescs.data(),
                                             Two, Eight, Residents, Kept),
            CATALYST_REMOTE_OK)
      << __catalyst__remote__last_error();
  Desc Back(2, 8);
  ASSERT_EQ(catalyst_remote_fetch(Kept[0], Back.data(), 2, 8, nullptr, 0), CATALYST_REMOTE_OK);
  EXPECT_EQ(Back.values(), X->D.values());
  EXPECT_EQ(Back.sizes(), X->D.sizes());
  std::free(Back.allocated());
  size_t Rank1[] = {1};
  EXPECT_EQ(catalyst_remote_launch_residents(Session.get(), remoteEntry("copy_r2_e8").c_str(),
                                             "copy.o", 1, InDescs, Rank1, Eight, 1, ADescs.data(),
                                             Two, Eight, Residents, nullptr),
            CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_TRUE(mentions(__catalyst__remote__last_error(), "has rank 2, element size 8; the launch "
                                                         "expects rank 1, element size 8"))
      << __catalyst__remote__last_error();
  EXPECT_EQ(catalyst_remote_release(Up), CATALYST_REMOTE_OK);
  EXPECT_EQ(catalyst_remote_release(Up), CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_EQ(catalyst_remote_release(Kept[0]), CATALYST_REMOTE_OK);
  EXPECT_EQ(FailureLog::count(), 0u) << "the handler is not called";
}

INSTANTIATE_TEST_SUITE_P(ZeroCopy, ResidentTest,
                         ::testing::Values(Mode::ZeroCopy, Mode::ZeroCopyShm), modeTestName);

// A pool takes the same calls: the chain's kept outputs stay on the member
// that made them.
TEST_F(CapiTest, APoolTakesResidentsThroughTheCAbi) {
  ASSERT_TRUE(Exec.start({}));
  ScopedEnv Strategy("CATALYST_REMOTE_STRATEGY", expectedStrategy(Mode::ZeroCopy));
  std::string Address = "pool:" + Exec.address();
  Session.reset(__catalyst__remote__open(Address.c_str()));
  ASSERT_GT(Session.get(), 0) << FailureLog::last();
  ASSERT_NO_FATAL_FAILURE(sendKernel("concat"));
  ASSERT_NO_FATAL_FAILURE(sendKernel("copy"));
  std::mt19937_64 Rng{11};
  checkChain(Session.get(), Rng);
}

} // namespace
