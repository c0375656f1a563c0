//===- ZeroCopyWireTest.cpp - Hand-written zero-copy launch requests ------===//
//
// The executor receives a zero-copy launch's payload straight into the
// destinations its plan names, so it checks each against the slabs it
// reserved for the session; a plan that fails the check gets an error reply
// naming the destination, its payload is drained, and the session goes on.
// A session never sends such a plan, so these tests speak the protocol
// themselves: ORC EPC over the project's transport, the zero-copy extension
// enabled, a slab reserved, map.o linked by the engine's own CodeLinker, and
// launch plans written by hand.
//
//===----------------------------------------------------------------------===//

#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Memref.h"
#include "Text.h"
#include "session/CodeLinker.h"
#include "session/OpenChannel.h"
#include "wire/Protocol.h"
#include "wire/SocketTransport.h"
#include "wire/SpsCheck.h"

#include "llvm/ExecutionEngine/Orc/SimpleRemoteEPC.h"
#include "llvm/ExecutionEngine/Orc/TaskDispatch.h"
#include "llvm/Support/FormatVariadic.h"

#include <condition_variable>
#include <cstring>
#include <sys/uio.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace llvm;
using namespace llvm::orc;

namespace {

Error failure(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), What);
}

// What the executor answered to one launch.
struct Reply {
  std::string Error; // empty when the entry ran
  std::vector<wire::ZeroCopyOutput> Outputs;
  std::vector<char> Payload;   // every output's values, in order
  bool InSharedMemory = false; // a SharedResult, not decoded here
};

// A zero-copy client with nothing of the engine's transfer code: it sends
// whatever plan it is given and hands back the reply as it came.
class RawClient final : public wire::PayloadHandler {
public:
  // Enables zero-copy launches as a host speaking HostVersion; only a
  // client speaking the executor's version checks the answer. Plans and
  // results are in the encoding of wire::ZeroCopyVersion whatever it says.
  // Over the executor's local socket when Local (its shared slabs' memfds
  // are then passed, and dropped here: this client writes nothing there).
  static Expected<std::unique_ptr<RawClient>> connect(const std::string &Address,
                                                      uint32_t HostVersion = wire::ZeroCopyVersion,
                                                      bool Local = false);
  ~RawClient() override;

  Expected<ExecutorAddr> link(const std::string &File, const std::string &Entry);
  // A slab; with Shared, one in memory the executor shares (its local
  // socket's service).
  Expected<ExecutorAddr> reserveSlab(uint64_t Bytes, bool Shared = false);
  Error releaseSlab(ExecutorAddr Base);
  // A slab, asked of the slab service as if it were at Instance.
  Expected<ExecutorAddr> reserveSlabOn(ExecutorAddr Instance, uint64_t Bytes);
  // The instances the executor published (wire/Protocol.h).
  ExecutorAddr ZeroCopy, Slabs, SharedSlabs;
  // Sends one launch and waits for its result.
  // OpC SharedLaunch says the inputs are in place already; Reordered, the
  // inputs whose payload is in source order.
  Expected<Reply> launch(ExecutorAddr Entry, const std::vector<wire::ZeroCopyInput> &Inputs,
                         const std::vector<wire::LaunchOutputSpec> &Outputs, ArrayRef<char> Payload,
                         wire::PayloadOpcode OpC = wire::PayloadOpcode::Launch,
                         const std::vector<wire::SourceOrdered> &Reordered = {});

  // Called on the transport's reader thread.
  Expected<std::vector<iovec>> place(wire::PayloadOpcode OpC, uint64_t SeqNo, ArrayRef<char> Plan,
                                     uint64_t PayloadBytes) override;
  void finish(wire::PayloadOpcode OpC, uint64_t SeqNo, shared::WrapperFunctionBuffer Plan,
              Error Err) override;
  void disconnected() override;

private:
  RawClient() = default;
  Error enableZeroCopy(uint32_t HostVersion);

public:
  ExecutorProcessControl &epc() { return ES->getExecutorProcessControl(); }

private:
  std::unique_ptr<ExecutionSession> ES;
  wire::SocketTransport *Transport = nullptr;
  std::unique_ptr<CodeLinker> Linker;
  ExecutorAddr Reserve, ReserveShared, Release;

  std::mutex M;
  std::condition_variable Answered;
  uint64_t Awaited = 0; // the launch in flight
  bool Done = false;
  std::string Broken; // why the reply could not be received
  Reply Current;
};

Expected<std::unique_ptr<RawClient>> RawClient::connect(const std::string &Address,
                                                        uint32_t HostVersion, bool Local) {
  SessionOptions O;
  O.Transport = Local ? TransportKind::Local : TransportKind::Tcp;
  auto Fd = openChannel(Address, O, std::chrono::steady_clock::now() + std::chrono::seconds(10));
  if (!Fd)
    return Fd.takeError();
  std::unique_ptr<RawClient> C(new RawClient);
  // Not ReadOnDemand: the transport's reader thread reads every message.
  wire::TransportOptions TOpts;
  auto EPC = SimpleRemoteEPC::Create<wire::SocketTransport>(
      std::make_unique<DynamicThreadPoolTaskDispatcher>(std::nullopt), SimpleRemoteEPC::Setup(),
      Fd->Fd, TOpts, &C->Transport);
  if (!EPC)
    return EPC.takeError();
  C->ES = std::make_unique<ExecutionSession>(std::move(*EPC));
  auto L = CodeLinker::Create(*C->ES);
  if (!L)
    return L.takeError();
  C->Linker = std::move(*L);
  if (auto Err = C->enableZeroCopy(HostVersion))
    return Err;
  return C;
}

Error RawClient::enableZeroCopy(uint32_t HostVersion) {
  ExecutorAddr Enable;
  if (auto Err = epc().getBootstrapSymbols({{Enable, wire::ZeroCopyEnableName},
                                            {ZeroCopy, wire::ZeroCopyInstanceName},
                                            {Slabs, wire::SlabsInstanceName},
                                            {SharedSlabs, wire::SharedSlabsInstanceName},
                                            {Reserve, wire::SlabReserveName},
                                            {ReserveShared, wire::SharedSlabReserveName},
                                            {Release, wire::SlabReleaseName}}))
    return Err;
  Transport->setPayloadHandler(this);
  Expected<uint32_t> Version(0u);
  if (auto Err =
          epc().callSPSWrapper<wire::SPSZeroCopyEnableSig>(Enable, Version, ZeroCopy, HostVersion))
    return Err;
  if (!Version)
    return Version.takeError();
  return *Version == wire::ZeroCopyVersion
             ? Error::success()
             : failure("executor speaks zero-copy version " + Twine(*Version));
}

RawClient::~RawClient() {
  Transport->setPayloadHandler(nullptr);
  consumeError(ES->endSession());
  Linker.reset();
}

Expected<ExecutorAddr> RawClient::link(const std::string &File, const std::string &Entry) {
  if (auto Err = Linker->addObject(kernelObject(File)))
    return Err;
  return Linker->lookup(File + ".o", remoteEntry(Entry));
}

Expected<ExecutorAddr> RawClient::reserveSlab(uint64_t Bytes, bool Shared) {
  Expected<ExecutorAddr> Base((ExecutorAddr()));
  if (auto Err = epc().callSPSWrapper<wire::SPSSlabReserveSig>(
          Shared ? ReserveShared : Reserve, Base, Shared ? SharedSlabs : Slabs, Bytes))
    return Err;
  return Base;
}

Expected<ExecutorAddr> RawClient::reserveSlabOn(ExecutorAddr Instance, uint64_t Bytes) {
  Expected<ExecutorAddr> Base((ExecutorAddr()));
  if (auto Err = epc().callSPSWrapper<wire::SPSSlabReserveSig>(Reserve, Base, Instance, Bytes))
    return Err;
  return Base;
}

Error RawClient::releaseSlab(ExecutorAddr Base) {
  Error Result = Error::success();
  if (auto Err = epc().callSPSWrapper<wire::SPSSlabReleaseSig>(Release, Result, Slabs, Base))
    return joinErrors(std::move(Err), std::move(Result));
  return Result;
}

Expected<Reply> RawClient::launch(ExecutorAddr Entry,
                                  const std::vector<wire::ZeroCopyInput> &Inputs,
                                  const std::vector<wire::LaunchOutputSpec> &Outputs,
                                  ArrayRef<char> Payload, wire::PayloadOpcode OpC,
                                  const std::vector<wire::SourceOrdered> &Reordered) {
  std::vector<char> Plan(wire::SPSZeroCopyPlan::size(Entry, Inputs, Outputs, Reordered));
  wire::sps::SPSOutputBuffer OB(Plan.data(), Plan.size());
  if (!wire::SPSZeroCopyPlan::serialize(OB, Entry, Inputs, Outputs, Reordered))
    return failure("cannot encode the plan");
  uint64_t SeqNo;
  {
    std::lock_guard<std::mutex> Lock(M);
    SeqNo = ++Awaited;
    Done = false;
    Broken.clear();
    Current = Reply();
  }
  wire::PayloadPart Part{Payload.data(), Payload.size(), nullptr};
  if (auto Err = Transport->sendWithPayload(OpC, SeqNo, Plan, Part))
    return Err;
  std::unique_lock<std::mutex> Lock(M);
  if (!Answered.wait_for(Lock, std::chrono::seconds(10), [this] { return Done; }))
    return failure("no reply within 10 s");
  if (!Broken.empty())
    return failure(Broken);
  return std::move(Current);
}

Expected<std::vector<iovec>> RawClient::place(wire::PayloadOpcode OpC, uint64_t SeqNo,
                                              ArrayRef<char> Plan, uint64_t PayloadBytes) {
  std::lock_guard<std::mutex> Lock(M);
  if (OpC == wire::PayloadOpcode::SharedSlab)
    return std::vector<iovec>(); // a slab for a host that writes there; not this one
  if (OpC == wire::PayloadOpcode::SharedResult && SeqNo == Awaited) {
    Current.InSharedMemory = true;
    return std::vector<iovec>();
  }
  if (OpC != wire::PayloadOpcode::LaunchResult || SeqNo != Awaited)
    return failure("unexpected message " + Twine(SeqNo));
  uint64_t CopyInNs, KernelNs, CopyOutNs, Copied, StartNs;
  wire::sps::SPSInputBuffer IB(Plan.data(), Plan.size());
  // Exactly the plan, nothing after it.
  bool Decoded = wire::spsWellFormed<wire::SPSZeroCopyResult>(Plan.data(), Plan.size()) &&
                 wire::SPSZeroCopyResult::deserialize(IB, Current.Error, Current.Outputs, CopyInNs,
                                                      KernelNs, CopyOutNs, Copied, StartNs);
  if (!Decoded)
    return failure("undecodable result plan");
  Current.Payload.resize(PayloadBytes);
  if (!PayloadBytes)
    return std::vector<iovec>();
  return std::vector<iovec>{{Current.Payload.data(), Current.Payload.size()}};
}

void RawClient::finish(wire::PayloadOpcode OpC, uint64_t, shared::WrapperFunctionBuffer,
                       Error Err) {
  if (OpC == wire::PayloadOpcode::SharedSlab)
    return consumeError(std::move(Err)); // nothing was placed, nothing can have failed
  {
    std::lock_guard<std::mutex> Lock(M);
    if (Err)
      Broken = toString(std::move(Err));
    Done = true;
  }
  Answered.notify_all();
}

void RawClient::disconnected() {
  {
    std::lock_guard<std::mutex> Lock(M);
    Broken = "the executor closed the connection";
    Done = true;
  }
  Answered.notify_all();
}

// The executor rounds slabs up to 2 MiB huge pages, so one of exactly 2 MiB
// ends where it was asked to.
constexpr uint64_t SlabBytes = 2 << 20;

const std::vector<int32_t> Values = {7, -1, 1 << 30, 42};

class ZeroCopyWireTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(Exec.start());
    auto C = RawClient::connect(Exec.address());
    ASSERT_TRUE(bool(C)) << toString(C.takeError());
    Client = std::move(*C);
    auto E = Client->link("map", "map_r1_e4");
    ASSERT_TRUE(bool(E)) << toString(E.takeError());
    Entry = *E;
    auto B = Client->reserveSlab(SlabBytes);
    ASSERT_TRUE(bool(B)) << toString(B.takeError());
    Slab = *B;
  }

  // map_r1_e4 on Values, which the plan says land at Dest.
  Expected<Reply> mapAt(ExecutorAddr Dest) {
    uint64_t Bytes = Values.size() * sizeof(int32_t);
    std::vector<wire::ZeroCopyInput> Ins = {{4, {int64_t(Values.size())}, Dest, Bytes}};
    return Client->launch(Entry, Ins, {{1, 4}},
                          {reinterpret_cast<const char *>(Values.data()), size_t(Bytes)});
  }

  ExecutorProcess Exec;
  std::unique_ptr<RawClient> Client;
  ExecutorAddr Entry, Slab;
};

// The values map's entry of rank Rank computes from int32 Input of Sizes,
// run here.
std::vector<char> mappedHere(const std::vector<int64_t> &Sizes, const std::vector<int32_t> &Input) {
  auto In = makeDenseInput<int32_t>(Sizes, Input);
  Desc Out(Sizes.size(), 4);
  void *Av[] = {In->D.data()};
  hostEntry("map", "map_r" + std::to_string(Sizes.size()) + "_e4")(Out.data(), Av);
  auto Bytes = Out.values();
  std::free(Out.allocated());
  return std::vector<char>(Bytes.begin(), Bytes.end());
}

std::vector<char> expectedMap() {
  return mappedHere({int64_t(Values.size())}, Values);
}

::testing::AssertionResult ranCorrectly(Expected<Reply> R) {
  if (!R)
    return ::testing::AssertionFailure() << toString(R.takeError());
  if (!R->Error.empty())
    return ::testing::AssertionFailure() << "error reply: " << R->Error;
  wire::Shape Shape = {int64_t(Values.size())};
  if (R->Outputs.size() != 1 || std::get<0>(R->Outputs[0]) != Shape)
    return ::testing::AssertionFailure() << "wrong output shapes";
  if (R->Payload != expectedMap())
    return ::testing::AssertionFailure() << "output values differ from the local kernel's";
  return ::testing::AssertionSuccess();
}

// Expects an error reply naming Dest, and nothing else in it.
::testing::AssertionResult refused(Expected<Reply> R, ExecutorAddr Dest) {
  if (!R)
    return ::testing::AssertionFailure() << "no reply: " << toString(R.takeError());
  std::string Named = "input 0: destination " + formatv("{0:x}", Dest.getValue()).str() +
                      " (16 bytes) is outside this session's slabs";
  if (R->Error.find(Named) == std::string::npos)
    return ::testing::AssertionFailure()
           << "error '" << R->Error << "' should say '" << Named << "'";
  if (!R->Outputs.empty() || !R->Payload.empty())
    return ::testing::AssertionFailure() << "an error reply carries no outputs";
  return ::testing::AssertionSuccess();
}

TEST_F(ZeroCopyWireTest, LaunchesIntoTheSlabRun) {
  EXPECT_TRUE(ranCorrectly(mapAt(Slab)));
  EXPECT_TRUE(ranCorrectly(mapAt(Slab + (SlabBytes - 16)))) << "the last 16 bytes of the slab";
}

// A service is called on the instance it published, ORC's way: any other
// address, another service's instance included, is refused, named, and the
// session goes on.
TEST_F(ZeroCopyWireTest, AServiceCalledOnAnInstanceItDidNotPublishIsRefused) {
  const std::pair<const char *, ExecutorAddr> Bad[] = {
      {"nothing", ExecutorAddr(0x1234)},
      {"the shared slab service", Client->SharedSlabs},
      {"the zero-copy service", Client->ZeroCopy},
  };
  for (auto &[What, At] : Bad) {
    SCOPED_TRACE(What);
    auto Slab = Client->reserveSlabOn(At, SlabBytes);
    ASSERT_FALSE(bool(Slab));
    std::string Msg = toString(Slab.takeError());
    EXPECT_TRUE(mentions(Msg, "no slab service at " + formatv("{0:x}", At.getValue()).str() +
                                  " in this executor"))
        << Msg;
  }
  EXPECT_NE(Client->Slabs, Client->SharedSlabs);
  EXPECT_TRUE(ranCorrectly(mapAt(Slab)));
}

// Each bad request is answered, and a good one right after it runs: the
// executor drained the refused payload and kept the stream framed.
TEST_F(ZeroCopyWireTest, DestinationsOutsideTheSlabsAreRefusedAndTheSessionGoesOn) {
  auto Released = Client->reserveSlab(SlabBytes);
  ASSERT_TRUE(bool(Released)) << toString(Released.takeError());
  ASSERT_FALSE(static_cast<bool>(Client->releaseSlab(*Released)));
  const std::pair<const char *, ExecutorAddr> Bad[] = {
      {"far below any slab", ExecutorAddr(0x1000)},
      {"straddling the slab's end", Slab + (SlabBytes - 8)},
      {"in a released slab", *Released},
  };
  for (auto &[What, Dest] : Bad) {
    SCOPED_TRACE(What);
    EXPECT_TRUE(refused(mapAt(Dest), Dest));
    EXPECT_TRUE(ranCorrectly(mapAt(Slab)));
  }
}

// Two inputs whose destinations share bytes would land on each other: the
// plan is refused, in whichever order it lists them, and the session goes
// on. Inputs side by side, in either order, run.
TEST_F(ZeroCopyWireTest, InputsThatShareBytesAreRefusedAndTheSessionGoesOn) {
  const uint64_t Bytes = Values.size() * sizeof(int32_t);
  auto Twice = [&](ExecutorAddr A, ExecutorAddr B) {
    std::vector<wire::ZeroCopyInput> Ins = {{4, {int64_t(Values.size())}, A, Bytes},
                                            {4, {int64_t(Values.size())}, B, Bytes}};
    std::vector<char> Payload(2 * Bytes);
    std::memcpy(Payload.data(), Values.data(), Bytes);
    std::memcpy(Payload.data() + Bytes, Values.data(), Bytes);
    return Client->launch(Entry, Ins, {{1, 4}}, Payload);
  };
  const std::tuple<const char *, ExecutorAddr, ExecutorAddr, ExecutorAddr> Bad[] = {
      {"the same place", Slab, Slab, Slab},
      {"the second half over the first", Slab, Slab + 8, Slab + 8},
      {"the first half over the second", Slab + 8, Slab, Slab + 8},
  };
  for (auto &[What, A, B, At] : Bad) {
    SCOPED_TRACE(What);
    auto R = Twice(A, B);
    ASSERT_TRUE(bool(R)) << toString(R.takeError());
    std::string Says =
        "inputs 0 and 1 share bytes at destination " + formatv("{0:x}", At.getValue()).str();
    EXPECT_NE(R->Error.find(Says), std::string::npos) << R->Error << " should say " << Says;
    EXPECT_TRUE(R->Outputs.empty());
    EXPECT_TRUE(ranCorrectly(mapAt(Slab)));
  }
  EXPECT_TRUE(ranCorrectly(Twice(Slab, Slab + Bytes)));
  EXPECT_TRUE(ranCorrectly(Twice(Slab + Bytes, Slab)));
}

// A [4][8] view of a dense [8][4] array (strides {1, 4}), sent in the
// array's order for the executor to transpose as it lands.
class SourceOrderWireTest : public ZeroCopyWireTest {
protected:
  void SetUp() override {
    ZeroCopyWireTest::SetUp();
    auto E = Client->link("map", "map_r2_e4");
    ASSERT_TRUE(bool(E)) << toString(E.takeError());
    Entry2 = *E;
    for (int32_t I = 0; I < 32; ++I)
      Array.push_back(I * 7919 - 50000);
  }

  Expected<Reply> mapTransposed(wire::Shape Strides, uint64_t Index = 0) {
    std::vector<wire::ZeroCopyInput> Ins = {{4, {4, 8}, Slab, 128}};
    return Client->launch(Entry2, Ins, {{2, 4}},
                          {reinterpret_cast<const char *>(Array.data()), 128},
                          wire::PayloadOpcode::Launch, {{Index, Strides}});
  }

  // map_r2_e4 run here on the transpose, made dense.
  std::vector<char> expected() const {
    std::vector<int32_t> Dense;
    for (int64_t R = 0; R < 4; ++R)
      for (int64_t C = 0; C < 8; ++C)
        Dense.push_back(Array[C * 4 + R]);
    return mappedHere({4, 8}, Dense);
  }

  ExecutorAddr Entry2;
  std::vector<int32_t> Array;
};

TEST_F(SourceOrderWireTest, AnInputInSourceOrderIsTransposedAsItLands) {
  auto R = mapTransposed({1, 4});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->Error, "");
  wire::Shape Shape = {4, 8};
  ASSERT_EQ(R->Outputs.size(), 1u);
  EXPECT_EQ(std::get<0>(R->Outputs[0]), Shape);
  EXPECT_EQ(R->Payload, expected());
}

// Strides that are not a dense array's, or name no input, get an error
// reply saying so; the payload is drained and the next launch runs.
TEST_F(SourceOrderWireTest, BadSourceOrdersAreRefusedAndTheSessionGoesOn) {
  const std::tuple<const char *, wire::Shape, uint64_t, const char *> Bad[] = {
      {"a gap", {1, 5}, 0, "strides are not a permutation of a dense array's"},
      {"overlapping", {1, 1}, 0, "strides are not a permutation of a dense array's"},
      {"a broadcast", {0, 4}, 0, "dimension 0 has stride 0"},
      {"one stride short", {1}, 0, "rank or element size out of range"},
      {"no such input", {1, 4}, 1, "input 1 in source order is out of order or range"},
  };
  for (auto &[What, Strides, Index, Says] : Bad) {
    SCOPED_TRACE(What);
    auto R = mapTransposed(Strides, Index);
    ASSERT_TRUE(bool(R)) << toString(R.takeError());
    EXPECT_NE(R->Error.find(Says), std::string::npos) << R->Error;
    EXPECT_TRUE(R->Payload.empty());
    EXPECT_TRUE(ranCorrectly(mapAt(Slab)));
  }
  auto R = mapTransposed({1, 4});
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Payload, expected());
}

// map_r1_e4 on Values from a client speaking zero-copy HostVersion, on an
// executor of its own.
Expected<Reply> mapAsVersion(uint32_t HostVersion) {
  ExecutorProcess Exec;
  if (!Exec.start())
    return failure("the executor did not start");
  auto C = RawClient::connect(Exec.address(), HostVersion);
  if (!C)
    return C.takeError();
  auto Entry = (*C)->link("map", "map_r1_e4");
  if (!Entry)
    return Entry.takeError();
  auto Slab = (*C)->reserveSlab(SlabBytes);
  if (!Slab)
    return Slab.takeError();
  std::vector<wire::ZeroCopyInput> Ins = {{4, {4}, *Slab, 16}};
  return (*C)->launch(*Entry, Ins, {{1, 4}}, {reinterpret_cast<const char *>(Values.data()), 16});
}

// A host of another version, earlier (the versions 1 and 2 of builds
// before 0.1.0) or later, is refused: each launch gets an error reply that
// names both versions, and the entry never runs.
TEST(ZeroCopyVersionTest, AHostOfAnotherVersionIsRefused) {
  for (uint32_t Theirs : {1u, 2u, wire::ZeroCopyVersion + 1}) {
    SCOPED_TRACE("host version " + std::to_string(Theirs));
    auto R = mapAsVersion(Theirs);
    ASSERT_TRUE(bool(R)) << toString(R.takeError());
    std::string Says = "zero-copy launches were refused: the host speaks version " +
                       std::to_string(Theirs) + ", this executor " +
                       std::to_string(wire::ZeroCopyVersion);
    EXPECT_NE(R->Error.find(Says), std::string::npos) << R->Error;
    EXPECT_TRUE(R->Outputs.empty());
    EXPECT_TRUE(R->Payload.empty());
  }
}

// SPS bytes whose first sequence announces Count elements and carries none.
std::vector<char> hugeSequence(std::vector<char> Prefix, uint64_t Count) {
  char Bytes[8];
  support::endian::write64le(Bytes, Count);
  Prefix.insert(Prefix.end(), Bytes, Bytes + 8);
  return Prefix;
}

// A request announcing 2^61 output ranks (or asset bytes) in a few bytes
// made the executor's decoder reserve them and its connection process die.
// Now it is an error reply, and the same connection answers the next call.
TEST_F(ZeroCopyWireTest, HugeCountsInARequestAreRefusedAndTheConnectionLives) {
  std::vector<pid_t> Before, After;
  ASSERT_TRUE(Exec.waitForConnections(1, Before, std::chrono::seconds(10)));
  ExecutorAddr Batched, Store;
  ASSERT_FALSE(bool(Client->epc().getBootstrapSymbols(
      {{Batched, wire::BatchedInvokeName}, {Store, wire::StoreAssetName}})));
  // entry, av, then the ranks' count.
  std::vector<char> Invoke = hugeSequence(std::vector<char>(16, 1), uint64_t(1) << 61);
  std::vector<char> Asset = hugeSequence({}, uint64_t(1) << 61);
  // The batched service's result carries an error, which says why.
  auto R = Client->epc().callWrapper(Batched, Invoke);
  std::string Reply(R.data(), R.size());
  EXPECT_TRUE(!Reply.empty() && Reply[0] == 0) << "an error value";
  EXPECT_NE(Reply.find("malformed request"), std::string::npos) << Reply;
  // Storing an asset answers a status, where the refusal cannot be said.
  EXPECT_EQ(Client->epc().callWrapper(Store, Asset).size(), 0u);
  EXPECT_TRUE(ranCorrectly(mapAt(Slab)));
  ASSERT_TRUE(Exec.waitForConnections(1, After, std::chrono::seconds(10)));
  EXPECT_EQ(After, Before) << "the same connection process serves on";
}

// Over the local socket, a launch whose inputs are in place already must
// name places in memory the executor shares with the host (and come with
// no payload): the kernel reads them where they are.
TEST(SharedLaunchWireTest, InputsInPlaceMustBeInSharedSlabs) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  auto C = RawClient::connect(Exec.address(), wire::ZeroCopyVersion, /*Local=*/true);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  auto Entry = (*C)->link("map", "map_r1_e4");
  ASSERT_TRUE(bool(Entry)) << toString(Entry.takeError());
  auto Private = (*C)->reserveSlab(SlabBytes);
  auto Shared = (*C)->reserveSlab(SlabBytes, /*Shared=*/true);
  ASSERT_TRUE(Private && Shared);
  auto SharedLaunch = [&](ExecutorAddr Dest, ArrayRef<char> Payload) {
    std::vector<wire::ZeroCopyInput> Ins = {{4, {4}, Dest, 16}};
    return (*C)->launch(*Entry, Ins, {{1, 4}}, Payload, wire::PayloadOpcode::SharedLaunch);
  };
  EXPECT_TRUE(refused(SharedLaunch(*Private, {}), *Private)) << "a slab the host cannot write";
  EXPECT_TRUE(refused(SharedLaunch(ExecutorAddr(0x1000), {}), ExecutorAddr(0x1000)));
  auto WithPayload = SharedLaunch(*Shared, {reinterpret_cast<const char *>(Values.data()), 16});
  ASSERT_TRUE(bool(WithPayload)) << toString(WithPayload.takeError());
  EXPECT_TRUE(mentions(WithPayload->Error, "came with a payload of 16 bytes"))
      << WithPayload->Error;
  auto Ran = SharedLaunch(*Shared, {});
  ASSERT_TRUE(bool(Ran)) << toString(Ran.takeError());
  EXPECT_TRUE(Ran->InSharedMemory) << Ran->Error;
}

// A TCP connection has no shared slabs to give.
TEST(SharedLaunchWireTest, SharedSlabsNeedTheLocalSocket) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  auto C = RawClient::connect(Exec.address());
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  auto Shared = (*C)->reserveSlab(SlabBytes, /*Shared=*/true);
  ASSERT_FALSE(bool(Shared));
  std::string Msg = toString(Shared.takeError());
  EXPECT_TRUE(mentions(Msg, "need the executor's local socket")) << Msg;
}

} // namespace
