//===- ResidentTransferTest.cpp - Resident requests from the host's side --===//
//
// The zero-copy transfer's resident requests (ZeroCopyTransfer::request,
// wire/Residents.h) against a real executor, below the session: an upload
// is kept and fetched back byte for byte, then released; what the executor
// refuses (an id in use, a tensor past --max-resident-mib, a fetch after
// the release) comes back as the reply's error, and the connection goes
// on serving.
//
//===----------------------------------------------------------------------===//

#include "ExecutorProcess.h"
#include "Text.h"
#include "session/OpenChannel.h"
#include "transfer/ZeroCopyTransfer.h"
#include "wire/Residents.h"
#include "wire/SocketTransport.h"

#include "llvm/ExecutionEngine/Orc/SimpleRemoteEPC.h"
#include "llvm/ExecutionEngine/Orc/TaskDispatch.h"

#include "gtest/gtest.h"
#include <cstring>
#include <numeric>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace llvm;
using namespace llvm::orc;

namespace {

constexpr uint64_t MiB = 1 << 20;

class ResidentTransferTest : public ::testing::Test {
protected:
  // An executor started with Args, and a zero-copy transfer to it.
  void connect(std::vector<std::string> Args = {}) {
    ExecutorOptions EO;
    EO.Args = std::move(Args);
    ASSERT_TRUE(Exec.start(EO));
    SessionOptions O;
    O.Transport = TransportKind::Tcp;
    auto Fd =
        openChannel(Exec.address(), O, std::chrono::steady_clock::now() + std::chrono::seconds(10));
    ASSERT_TRUE(bool(Fd)) << toString(Fd.takeError());
    // As a session's: the launching thread reads its own replies.
    wire::TransportOptions TOpts;
    TOpts.ReadOnDemand = true;
    auto EPC = SimpleRemoteEPC::Create<wire::SocketTransport>(
        std::make_unique<DynamicThreadPoolTaskDispatcher>(std::nullopt), SimpleRemoteEPC::Setup(),
        Fd->Fd, TOpts, &Transport);
    ASSERT_TRUE(bool(EPC)) << toString(EPC.takeError());
    ES = std::make_unique<ExecutionSession>(std::move(*EPC));
    auto Z = ZeroCopyTransfer::Create(ES->getExecutorProcessControl(), *Transport, 4 * MiB,
                                      64 * MiB, makeSocketPayloads());
    ASSERT_TRUE(bool(Z)) << toString(Z.takeError());
    Zero = std::move(*Z);
  }

  void TearDown() override {
    if (Zero)
      consumeError(Zero->close()); // the executor frees it with the connection anyway
    Zero.reset();
    if (ES)
      consumeError(ES->endSession()); // the test has checked what it needed
  }

  Expected<wire::ResidentReply> upload(uint64_t Id, ArrayRef<int64_t> Sizes,
                                       ArrayRef<double> Values) {
    wire::PayloadPart Part{reinterpret_cast<const char *>(Values.data()), Values.size() * 8,
                           nullptr};
    return Zero->request(wire::PayloadOpcode::Upload, wire::encodeUploadPlan(Id, 8, Sizes), Part,
                         Stats);
  }
  Expected<wire::ResidentReply> fetch(uint64_t Id, MutableArrayRef<char> Into) {
    return Zero->request(wire::PayloadOpcode::Fetch, wire::encodeResidentIds({Id}), {}, Stats,
                         Into);
  }
  Expected<wire::ResidentReply> release(ArrayRef<uint64_t> Ids) {
    return Zero->request(wire::PayloadOpcode::Release, wire::encodeResidentIds(Ids), {}, Stats);
  }

  ExecutorProcess Exec;
  wire::SocketTransport *Transport = nullptr;
  std::unique_ptr<ExecutionSession> ES;
  std::unique_ptr<ZeroCopyTransfer> Zero;
  LaunchStats Stats;
};

// What a reply said, or why there was none.
std::string said(Expected<wire::ResidentReply> R) {
  return R ? R->Error : "no reply: " + toString(R.takeError());
}

TEST_F(ResidentTransferTest, AnUploadIsKeptFetchedBackAndReleased) {
  connect();
  ASSERT_NE(Zero->residents(), nullptr) << "the executor advertises residents";
  std::vector<double> Values(6 * 1000);
  std::iota(Values.begin(), Values.end(), 0.5);
  auto Up = upload(11, {6, 1000}, Values);
  ASSERT_TRUE(bool(Up)) << toString(Up.takeError());
  EXPECT_EQ(Up->Error, "");
  EXPECT_EQ(Up->Shape.Sizes, (wire::Shape{6, 1000}));
  EXPECT_EQ(Up->Shape.Bytes, Values.size() * 8);
  std::vector<double> Back(Values.size());
  auto Got = fetch(11, {reinterpret_cast<char *>(Back.data()), Back.size() * 8});
  ASSERT_TRUE(bool(Got)) << toString(Got.takeError());
  EXPECT_EQ(Got->Error, "");
  EXPECT_EQ(Back, Values);
  EXPECT_EQ(said(release({11})), "");
  std::vector<double> None(Values.size(), -1);
  EXPECT_TRUE(mentions(said(fetch(11, {reinterpret_cast<char *>(None.data()), None.size() * 8})),
                       "resident 11 does not exist in this session"));
  EXPECT_EQ(None[0], -1) << "a refused fetch writes nothing";
}

TEST_F(ResidentTransferTest, RefusalsComeBackAsTheReplysErrorAndTheConnectionGoesOn) {
  connect({"--max-resident-mib", "1"});
  std::vector<double> Small(16, 2.0), Big(MiB / 8 + 1, 3.0);
  ASSERT_EQ(said(upload(1, {16}, Small)), "");
  EXPECT_TRUE(mentions(said(upload(1, {16}, Small)), "resident id 1 is in use"));
  EXPECT_TRUE(mentions(said(upload(2, {int64_t(Big.size())}, Big)),
                       "per-session cap of 1 MiB (--max-resident-mib)"));
  EXPECT_TRUE(mentions(said(release({1, 2})), "resident 2 does not exist"));
  ASSERT_EQ(said(upload(3, {16}, Small)), "") << "still serving";
  std::vector<double> Back(16);
  ASSERT_EQ(said(fetch(3, {reinterpret_cast<char *>(Back.data()), Back.size() * 8})), "");
  EXPECT_EQ(Back, Small);
}

} // namespace
