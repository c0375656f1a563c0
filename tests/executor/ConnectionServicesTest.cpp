//===- ConnectionServicesTest.cpp - One connection's services, in process -===//
//
// executor/ConnectionServices.h with no executor started: the services
// over a real transport on one end of a socket pair, whose other end is a
// host's transport driven by the test. A zero-copy launch lands its inputs
// in the connection's slab, runs an entry of this binary there and answers
// with its output; a refused one is answered and the next runs; launches
// before zero-copy is enabled, or from a host of another version, are
// refused naming why; a result past the message limit is an error reply. A
// shared slab reaches the host as a memfd both map, counted in the budget.
// The services are published as instances, and only while they live.
//
//===----------------------------------------------------------------------===//

#include "../../executor/ConnectionServices.h"

#include "../support/QuietClient.h"
#include "wire/MemrefLayout.h"
#include "wire/Protocol.h"
#include "wire/Residents.h"
#include "wire/SocketTransport.h"

#include "gtest/gtest.h"
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::executor;
using namespace llvm;
using namespace llvm::orc;

namespace {

constexpr uint64_t MiB = 1 << 20;
const std::vector<int32_t> Values = {7, -1, 1 << 20, 42};

// Catalyst's entry ABI, run by the service: av[0] is a rank-1 int32
// memref; rv gets a fresh rank-1 int32 memref of its values doubled.
void doubled(void *Rv, void *Av) {
  wire::MemrefDesc In(static_cast<void **>(Av)[0], 1);
  int64_t N = In.size(0);
  auto *Out = static_cast<int32_t *>(std::malloc(size_t(N) * 4));
  const auto *From = static_cast<const int32_t *>(In.aligned()) + In.offset();
  for (int64_t I = 0; I < N; ++I)
    Out[I] = 2 * From[I * In.stride(0)];
  wire::MemrefDesc R(Rv, 1);
  R.setAllocated(Out);
  R.setSize(0, N);
  R.rewriteDense(Out);
}

// As doubled, but whatever its input, an output of 1 MiB of zeros.
void megabyte(void *Rv, void *) {
  wire::MemrefDesc R(Rv, 1);
  void *Out = std::calloc(MiB / 4, 4);
  R.setAllocated(Out);
  R.setSize(0, int64_t(MiB / 4));
  R.rewriteDense(Out);
}

// Hands its input back as its output, as a kernel may.
void identity(void *Rv, void *Av) {
  std::memcpy(Rv, static_cast<void **>(Av)[0], wire::MemrefDesc::byteSize(1));
}

// What the host end received of one launch, or of one shared slab.
struct Received {
  wire::PayloadOpcode OpC{};
  std::string Error;
  std::vector<wire::ZeroCopyOutput> Outputs;
  std::vector<char> Payload;
  uint8_t Kind = 0; // a SharedSlab's
  ExecutorAddr Base;
  uint64_t Bytes = 0;
  std::vector<int> Fds;
  wire::TensorShape Resident; // a ResidentReply's
};

// The host's end: sends launches and collects what comes back.
class Host final : public wire::PayloadHandler {
public:
  Expected<std::vector<iovec>> place(wire::PayloadOpcode OpC, uint64_t, ArrayRef<char> Plan,
                                     uint64_t PayloadBytes) override {
    std::lock_guard<std::mutex> Lock(M);
    Current = Received();
    Current.OpC = OpC;
    wire::sps::SPSInputBuffer IB(Plan.data(), Plan.size());
    bool Decoded = false;
    if (OpC == wire::PayloadOpcode::LaunchResult) {
      uint64_t CopyIn, Kernel, CopyOut, Copied, Start;
      Decoded = wire::SPSZeroCopyResult::deserialize(IB, Current.Error, Current.Outputs, CopyIn,
                                                     Kernel, CopyOut, Copied, Start);
    } else if (OpC == wire::PayloadOpcode::SharedSlab) {
      Decoded = wire::SPSSharedSlab::deserialize(IB, Current.Kind, Current.Base, Current.Bytes);
    } else if (OpC == wire::PayloadOpcode::ResidentReply) {
      auto R = wire::decodeResidentReply(Plan, PayloadBytes);
      if (!R)
        return R.takeError();
      Current.Error = R->Error;
      Current.Resident = R->Shape;
      Decoded = true;
    }
    if (!Decoded)
      return createStringError(inconvertibleErrorCode(), "an undecodable message");
    Current.Payload.resize(PayloadBytes);
    if (!PayloadBytes)
      return std::vector<iovec>();
    return std::vector<iovec>{{Current.Payload.data(), Current.Payload.size()}};
  }

  void finish(wire::PayloadOpcode, uint64_t, shared::WrapperFunctionBuffer, Error Err) override {
    std::lock_guard<std::mutex> Lock(M);
    if (Err)
      Current.Error = "host: " + toString(std::move(Err));
    if (T)
      Current.Fds = T->takeDescriptors();
    Got.push_back(std::move(Current));
    Changed.notify_all();
  }

  void disconnected() override {}

  // The next message, within 10 s.
  Expected<Received> next() {
    std::unique_lock<std::mutex> Lock(M);
    if (!Changed.wait_for(Lock, std::chrono::seconds(10), [&] { return !Got.empty(); }))
      return createStringError(inconvertibleErrorCode(), "nothing came within 10 s");
    Received R = std::move(Got.front());
    Got.erase(Got.begin());
    return R;
  }

  wire::SocketTransport *T = nullptr; // set before start()

private:
  std::mutex M;
  std::condition_variable Changed;
  Received Current;          // the message being handled (reader thread)
  std::vector<Received> Got; // guarded by M
};

class ConnectionServicesTest : public ::testing::Test {
protected:
  // The executor's transport lent to zero-copy launches, and to shared
  // slabs when Shared; ExecutorLimit its --max-message.
  void open(bool Shared = false, uint64_t ExecutorLimit = uint64_t(1) << 30) {
    int Fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, Fds), 0);
    wire::TransportOptions EO, HO;
    EO.MaxMessageSize = ExecutorLimit;
    HO.AcceptDescriptors = true;
    auto E = wire::SocketTransport::Create(ExecutorClient, Fds[0], EO);
    ASSERT_TRUE(bool(E)) << toString(E.takeError());
    Executor = std::move(*E);
    auto H = wire::SocketTransport::Create(HostClient, Fds[1], HO);
    ASSERT_TRUE(bool(H)) << toString(H.takeError());
    HostEnd = std::move(*H);
    C.payloads().attach(*Executor);
    if (Shared)
      C.sharedSlabs().attach(*Executor);
    Receiver.T = HostEnd.get();
    HostEnd->setPayloadHandler(&Receiver);
    ASSERT_FALSE(bool(Executor->start()));
    ASSERT_FALSE(bool(HostEnd->start()));
  }

  void TearDown() override {
    if (HostEnd)
      HostEnd->disconnect();
    if (Executor)
      Executor->disconnect();
    // The readers are joined as the transports go; then the services
    // stop using them.
    HostEnd.reset();
    Executor.reset();
    C.payloads().detach();
    C.sharedSlabs().detach();
  }

  // One launch of Entry on Values at Dest, and what came back.
  Expected<Received> launch(void (*Entry)(void *, void *), ExecutorAddr Dest) {
    uint64_t Bytes = Values.size() * 4;
    std::vector<wire::ZeroCopyInput> Ins = {{4, {int64_t(Values.size())}, Dest, Bytes}};
    std::vector<wire::LaunchOutputSpec> Outs = {{1, 4}};
    std::vector<wire::SourceOrdered> None;
    ExecutorAddr At = ExecutorAddr::fromPtr(Entry);
    std::vector<char> Plan(wire::SPSZeroCopyPlan::size(At, Ins, Outs, None));
    wire::sps::SPSOutputBuffer OB(Plan.data(), Plan.size());
    if (!wire::SPSZeroCopyPlan::serialize(OB, At, Ins, Outs, None))
      return createStringError(inconvertibleErrorCode(), "cannot encode the plan");
    wire::PayloadPart Part{reinterpret_cast<const char *>(Values.data()), Bytes, nullptr};
    if (auto Err = HostEnd->sendWithPayload(wire::PayloadOpcode::Launch, ++SeqNo, Plan, Part))
      return Err;
    return Receiver.next();
  }

  // One launch of Entry with residents: Input the first input's plan entry
  // (no destination and no bytes when it is a resident), Payload its
  // values when it is not.
  Expected<Received> launchWith(void (*Entry)(void *, void *), wire::ZeroCopyInput Input,
                                ArrayRef<char> Payload, std::vector<wire::ResidentRef> Residents,
                                std::vector<wire::ResidentRef> Kept) {
    std::vector<wire::ZeroCopyInput> Ins = {Input};
    std::vector<wire::LaunchOutputSpec> Outs = {{1, 4}};
    std::vector<wire::SourceOrdered> None;
    ExecutorAddr At = ExecutorAddr::fromPtr(Entry);
    std::vector<char> Plan(wire::SPSResidentLaunchPlan::size(At, Ins, Outs, None, Residents, Kept));
    wire::sps::SPSOutputBuffer OB(Plan.data(), Plan.size());
    if (!wire::SPSResidentLaunchPlan::serialize(OB, At, Ins, Outs, None, Residents, Kept))
      return createStringError(inconvertibleErrorCode(), "cannot encode the plan");
    return request(wire::PayloadOpcode::Launch, Plan, Payload);
  }
  // Entry on resident Id, as four int32s; its output kept as Keep unless 0.
  Expected<Received> launchOn(void (*Entry)(void *, void *), uint64_t Id, uint64_t Keep = 0) {
    std::vector<wire::ResidentRef> Kept;
    if (Keep)
      Kept.push_back({0, Keep});
    return launchWith(Entry, {4, {4}, ExecutorAddr(), 0}, {}, {{0, Id}}, Kept);
  }

  // One resident request: its plan and payload, and what came back.
  Expected<Received> request(wire::PayloadOpcode OpC, ArrayRef<char> Plan,
                             ArrayRef<char> Payload = {}) {
    wire::PayloadPart Part{Payload.data(), Payload.size(), nullptr};
    ArrayRef<wire::PayloadPart> Parts;
    if (!Payload.empty())
      Parts = Part;
    if (auto Err = HostEnd->sendWithPayload(OpC, ++SeqNo, Plan, Parts))
      return Err;
    return Receiver.next();
  }
  Expected<Received> upload(uint64_t Id, ArrayRef<int64_t> Sizes, ArrayRef<int32_t> Ints) {
    return request(wire::PayloadOpcode::Upload, wire::encodeUploadPlan(Id, 4, Sizes),
                   {reinterpret_cast<const char *>(Ints.data()), Ints.size() * 4});
  }
  Expected<Received> fetch(uint64_t Id) {
    return request(wire::PayloadOpcode::Fetch, wire::encodeResidentIds({Id}));
  }
  Expected<Received> release(ArrayRef<uint64_t> Ids) {
    return request(wire::PayloadOpcode::Release, wire::encodeResidentIds(Ids));
  }

  ConnectionServices C{64 * MiB, 16 * MiB};
  test::QuietClient ExecutorClient, HostClient;
  Host Receiver;
  std::unique_ptr<wire::SocketTransport> Executor, HostEnd;
  uint64_t SeqNo = 0;
};

std::vector<int32_t> doubledValues() {
  std::vector<int32_t> D;
  for (int32_t V : Values)
    D.push_back(2 * V);
  return D;
}

std::vector<int32_t> asInts(const std::vector<char> &Bytes) {
  std::vector<int32_t> Ints(Bytes.size() / 4);
  std::memcpy(Ints.data(), Bytes.data(), Ints.size() * 4);
  return Ints;
}

TEST_F(ConnectionServicesTest, ALaunchRunsOnItsInputsWhereTheyLanded) {
  open();
  EXPECT_EQ(C.zeroCopy().enable(wire::ZeroCopyVersion), wire::ZeroCopyVersion);
  auto Slab = C.slabs().reserve(2 * MiB);
  ASSERT_TRUE(bool(Slab)) << toString(Slab.takeError());
  auto R = launch(doubled, ExecutorAddr::fromPtr(*Slab + 64));
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->OpC, wire::PayloadOpcode::LaunchResult);
  EXPECT_EQ(R->Error, "");
  ASSERT_EQ(R->Outputs.size(), 1u);
  EXPECT_EQ(std::get<0>(R->Outputs[0]), wire::Shape{int64_t(Values.size())});
  EXPECT_EQ(asInts(R->Payload), doubledValues());
  EXPECT_EQ(std::memcmp(*Slab + 64, Values.data(), Values.size() * 4), 0)
      << "the inputs landed in the slab, where the plan said";
}

TEST_F(ConnectionServicesTest, ARefusedLaunchIsAnsweredAndTheNextRuns) {
  open();
  C.zeroCopy().enable(wire::ZeroCopyVersion);
  auto Slab = C.slabs().reserve(2 * MiB);
  ASSERT_TRUE(bool(Slab)) << toString(Slab.takeError());
  auto Bad = launch(doubled, ExecutorAddr(0x1000));
  ASSERT_TRUE(bool(Bad)) << toString(Bad.takeError());
  EXPECT_NE(Bad->Error.find("is outside this session's slabs"), std::string::npos) << Bad->Error;
  EXPECT_TRUE(Bad->Outputs.empty() && Bad->Payload.empty());
  auto Good = launch(doubled, ExecutorAddr::fromPtr(*Slab));
  ASSERT_TRUE(bool(Good)) << toString(Good.takeError());
  EXPECT_EQ(Good->Error, "");
  EXPECT_EQ(asInts(Good->Payload), doubledValues());
}

TEST_F(ConnectionServicesTest, LaunchesAreRefusedUntilEnabledInThisVersion) {
  open();
  auto Slab = C.slabs().reserve(2 * MiB);
  ASSERT_TRUE(bool(Slab)) << toString(Slab.takeError());
  auto Early = launch(doubled, ExecutorAddr::fromPtr(*Slab));
  ASSERT_TRUE(bool(Early)) << toString(Early.takeError());
  EXPECT_NE(Early->Error.find("zero-copy launches were not enabled by the host"), std::string::npos)
      << Early->Error;
  EXPECT_EQ(C.zeroCopy().enable(wire::ZeroCopyVersion - 1), wire::ZeroCopyVersion);
  auto Older = launch(doubled, ExecutorAddr::fromPtr(*Slab));
  ASSERT_TRUE(bool(Older)) << toString(Older.takeError());
  EXPECT_NE(
      Older->Error.find("the host speaks version " + std::to_string(wire::ZeroCopyVersion - 1)),
      std::string::npos)
      << Older->Error;
}

TEST_F(ConnectionServicesTest, AResultPastTheMessageLimitIsAnErrorReply) {
  open(/*Shared=*/false, /*ExecutorLimit=*/64 << 10);
  C.zeroCopy().enable(wire::ZeroCopyVersion);
  auto Slab = C.slabs().reserve(2 * MiB);
  ASSERT_TRUE(bool(Slab)) << toString(Slab.takeError());
  auto Big = launch(megabyte, ExecutorAddr::fromPtr(*Slab));
  ASSERT_TRUE(bool(Big)) << toString(Big.takeError());
  EXPECT_NE(Big->Error.find("the launch result does not fit a message: its outputs take 1048576 "
                            "bytes"),
            std::string::npos)
      << Big->Error;
  auto Small = launch(doubled, ExecutorAddr::fromPtr(*Slab));
  ASSERT_TRUE(bool(Small)) << toString(Small.takeError());
  EXPECT_EQ(asInts(Small->Payload), doubledValues()) << "the session went on";
}

TEST_F(ConnectionServicesTest, ASharedSlabIsAMemfdTheHostMapsCountedInTheBudget) {
  open(/*Shared=*/true);
  auto Slab = C.sharedSlabs().reserve(MiB);
  ASSERT_TRUE(bool(Slab)) << toString(Slab.takeError());
  uint64_t Counted = C.budget().used();
  EXPECT_GE(Counted, MiB);
  auto R = Receiver.next();
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->OpC, wire::PayloadOpcode::SharedSlab);
  EXPECT_EQ(R->Kind, uint8_t(wire::SharedSlabKind::Input));
  EXPECT_EQ(R->Base, ExecutorAddr::fromPtr(*Slab));
  ASSERT_EQ(R->Fds.size(), 1u);
  ASSERT_GE(R->Bytes, MiB);
  void *Mine = ::mmap(nullptr, R->Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, R->Fds[0], 0);
  ASSERT_NE(Mine, MAP_FAILED);
  std::memset(Mine, 0x3c, R->Bytes);
  EXPECT_EQ(static_cast<unsigned char>((*Slab)[R->Bytes - 1]), 0x3c) << "the same bytes";
  EXPECT_TRUE(C.slabs().hold().containsShared(*Slab, R->Bytes));
  ::munmap(Mine, R->Bytes);
  for (int Fd : R->Fds)
    ::close(Fd);
  EXPECT_FALSE(bool(C.slabs().release(*Slab)));
  EXPECT_EQ(C.budget().used(), 0u) << "released, given back";
}

TEST_F(ConnectionServicesTest, SharedSlabsNeedTheTransportLentToThem) {
  open(/*Shared=*/false);
  auto Slab = C.sharedSlabs().reserve(MiB);
  ASSERT_FALSE(bool(Slab));
  std::string Msg = toString(Slab.takeError());
  EXPECT_NE(Msg.find("need the executor's local socket"), std::string::npos) << Msg;
  EXPECT_EQ(C.budget().used(), 0u) << "nothing reserved, nothing counted";
}

// What a reply said, or why there was none.
std::string said(Expected<Received> R) {
  return R ? R->Error : "no reply: " + toString(R.takeError());
}

TEST_F(ConnectionServicesTest, AnUploadIsKeptFetchedAndReleased) {
  open();
  auto Up = upload(7, {2, 2}, Values);
  ASSERT_TRUE(bool(Up)) << toString(Up.takeError());
  EXPECT_EQ(Up->OpC, wire::PayloadOpcode::ResidentReply);
  EXPECT_EQ(Up->Error, "");
  EXPECT_EQ(Up->Resident.Sizes, (wire::Shape{2, 2}));
  const ResidentStore::Resident *Kept = C.residents().find(7);
  ASSERT_NE(Kept, nullptr);
  EXPECT_EQ(std::memcmp(Kept->Data, Values.data(), 16), 0) << "the payload landed in it";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(Kept->Data) % 64, 0u);
  EXPECT_GT(C.budget().used(), 0u) << "counted in the connection's budget";
  auto Back = fetch(7);
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_EQ(Back->Error, "");
  EXPECT_EQ(Back->Resident.ElemSize, 4u);
  EXPECT_EQ(asInts(Back->Payload), Values);
  EXPECT_EQ(said(release({7})), "");
  EXPECT_EQ(C.residents().find(7), nullptr);
  EXPECT_EQ(C.budget().used(), 0u);
  EXPECT_NE(said(fetch(7)).find("resident 7 does not exist in this session"), std::string::npos);
  EXPECT_NE(said(release({7})).find("resident 7 does not exist in this session"), std::string::npos)
      << "a second release";
}

TEST_F(ConnectionServicesTest, ResidentsAreBoundedAndBadRequestsRefusedAsTheSessionGoesOn) {
  open();
  ASSERT_EQ(said(upload(1, {4}, Values)), "");
  EXPECT_NE(said(upload(1, {4}, Values)).find("resident id 1 is in use in this session already"),
            std::string::npos);
  EXPECT_NE(said(upload(2, {5}, Values)).find("its shape takes 20 bytes, its payload 16"),
            std::string::npos);
  EXPECT_NE(said(upload(0, {4}, Values)).find("resident id 0"), std::string::npos);
  std::vector<int32_t> Big(17 * MiB / 4);
  EXPECT_NE(said(upload(3, {int64_t(Big.size())}, Big)).find("(--max-resident-mib)"),
            std::string::npos)
      << "past the 16 MiB cap";
  EXPECT_EQ(C.residents().size(), 1u) << "nothing kept of the refused ones";
  EXPECT_NE(said(request(wire::PayloadOpcode::Fetch, wire::encodeResidentIds({1, 1})))
                .find("2 ids, where 1 to 1 may come"),
            std::string::npos);
  EXPECT_NE(said(request(wire::PayloadOpcode::Fetch, {"\x01", 1})).find("do not decode"),
            std::string::npos);
  // Releasing names what it could not free, and frees the rest.
  ASSERT_EQ(said(upload(4, {4}, Values)), "");
  EXPECT_NE(said(release({1, 99, 4})).find("resident 99 does not exist"), std::string::npos);
  EXPECT_EQ(C.residents().size(), 0u);
  auto Fine = upload(5, {4}, Values);
  ASSERT_TRUE(bool(Fine)) << toString(Fine.takeError());
  EXPECT_EQ(Fine->Error, "") << "the session went on";
}

std::vector<int32_t> times(int32_t K) {
  std::vector<int32_t> D;
  for (int32_t V : Values)
    D.push_back(K * V);
  return D;
}

TEST_F(ConnectionServicesTest, AResidentInputIsReadWhereItIsKept) {
  open();
  C.zeroCopy().enable(wire::ZeroCopyVersion);
  ASSERT_EQ(said(upload(7, {4}, Values)), "");
  auto R = launchOn(doubled, 7);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Error, "");
  EXPECT_EQ(asInts(R->Payload), times(2));
  auto Again = launchOn(doubled, 7);
  ASSERT_TRUE(bool(Again)) << toString(Again.takeError());
  EXPECT_EQ(asInts(Again->Payload), times(2)) << "the resident is as it was";
}

TEST_F(ConnectionServicesTest, AKeptOutputStaysAndFeedsTheNextLaunch) {
  open();
  C.zeroCopy().enable(wire::ZeroCopyVersion);
  auto Slab = C.slabs().reserve(2 * MiB);
  ASSERT_TRUE(bool(Slab)) << toString(Slab.takeError());
  auto First = launchWith(doubled, {4, {4}, ExecutorAddr::fromPtr(*Slab), 16},
                          {reinterpret_cast<const char *>(Values.data()), 16}, {}, {{0, 9}});
  ASSERT_TRUE(bool(First)) << toString(First.takeError());
  EXPECT_EQ(First->Error, "");
  ASSERT_EQ(First->Outputs.size(), 1u);
  EXPECT_EQ(std::get<0>(First->Outputs[0]), wire::Shape{4});
  EXPECT_EQ(std::get<1>(First->Outputs[0]), 0u) << "none of its bytes travel";
  EXPECT_TRUE(First->Payload.empty());
  const ResidentStore::Resident *Kept = C.residents().find(9);
  ASSERT_NE(Kept, nullptr);
  EXPECT_EQ(Kept->Data, Kept->Allocated) << "the kernel's own buffer, kept";
  auto Second = launchOn(doubled, 9, 10);
  ASSERT_TRUE(bool(Second)) << toString(Second.takeError());
  EXPECT_EQ(Second->Error, "");
  auto Back = fetch(10);
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_EQ(asInts(Back->Payload), times(4));
  EXPECT_EQ(said(release({9, 10})), "");
  EXPECT_EQ(C.budget().used(), 4 * MiB) << "only the slab and its alignment are left";
}

TEST_F(ConnectionServicesTest, AnInputHandedBackIsCopiedWhenKeptAndNeverFreed) {
  open();
  C.zeroCopy().enable(wire::ZeroCopyVersion);
  ASSERT_EQ(said(upload(7, {4}, Values)), "");
  auto Sent = launchOn(identity, 7);
  ASSERT_TRUE(bool(Sent)) << toString(Sent.takeError());
  EXPECT_EQ(asInts(Sent->Payload), Values);
  auto Kept = launchOn(identity, 7, 8);
  ASSERT_TRUE(bool(Kept)) << toString(Kept.takeError());
  EXPECT_EQ(Kept->Error, "");
  ASSERT_NE(C.residents().find(8), nullptr);
  EXPECT_NE(C.residents().find(8)->Allocated, C.residents().find(7)->Allocated) << "a copy";
  EXPECT_EQ(said(release({7})), "");
  auto Back = fetch(8);
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_EQ(asInts(Back->Payload), Values) << "the copy outlives the input it came from";
}

TEST_F(ConnectionServicesTest, BadResidentLaunchesAreRefusedAndKeepNothing) {
  open();
  C.zeroCopy().enable(wire::ZeroCopyVersion);
  ASSERT_EQ(said(upload(7, {4}, Values)), "");
  EXPECT_NE(said(launchOn(doubled, 5)).find("input 0: resident 5 does not exist in this session"),
            std::string::npos);
  auto Wrong = launchWith(doubled, {4, {2, 2}, ExecutorAddr(), 0}, {}, {{0, 7}}, {});
  EXPECT_NE(said(std::move(Wrong))
                .find("input 0: resident 7 holds 4-byte elements in [4], the launch wants "
                      "4-byte elements in [2, 2]"),
            std::string::npos);
  EXPECT_NE(said(launchOn(doubled, 7, 7)).find("output 0: resident id 7 is in use"),
            std::string::npos);
  auto WithBytes = launchWith(doubled, {4, {4}, ExecutorAddr(), 16},
                              {reinterpret_cast<const char *>(Values.data()), 16}, {{0, 7}}, {});
  EXPECT_NE(said(std::move(WithBytes)).find("resident input 0 has an inconsistent shape"),
            std::string::npos);
  EXPECT_NE(said(launchWith(doubled, {4, {4}, ExecutorAddr(), 0}, {}, {{3, 7}}, {}))
                .find("resident input 3 is out of order or range"),
            std::string::npos);
  EXPECT_EQ(C.residents().size(), 1u) << "nothing kept by a refused launch";
  auto Fine = launchOn(doubled, 7);
  ASSERT_TRUE(bool(Fine)) << toString(Fine.takeError());
  EXPECT_EQ(asInts(Fine->Payload), times(2)) << "the session went on";
}

TEST(ConnectionServicesInstancesTest, TheServicesArePublishedWhileTheyLive) {
  StringMap<ExecutorAddr> Symbols;
  {
    ConnectionServices C(64 * MiB, 16 * MiB);
    C.addBootstrapSymbols(Symbols);
    ASSERT_EQ(Symbols.size(), 3u);
    auto Regions = instanceAt<Slabs>(Symbols[wire::SlabsInstanceName], "slab service");
    ASSERT_TRUE(bool(Regions)) << toString(Regions.takeError());
    EXPECT_EQ(&*Regions, &C.slabs());
    auto Shared = instanceAt<SharedSlabs>(Symbols[wire::SharedSlabsInstanceName], "shared slabs");
    ASSERT_TRUE(bool(Shared)) << toString(Shared.takeError());
    EXPECT_EQ(&*Shared, &C.sharedSlabs());
    auto ZeroCopy = instanceAt<ZeroCopyService>(Symbols[wire::ZeroCopyInstanceName], "zero-copy");
    ASSERT_TRUE(bool(ZeroCopy)) << toString(ZeroCopy.takeError());
    EXPECT_EQ(&*ZeroCopy, &C.zeroCopy());
    auto Crossed = instanceAt<Slabs>(Symbols[wire::SharedSlabsInstanceName], "slab service");
    ASSERT_FALSE(bool(Crossed)) << "another service's instance";
    consumeError(Crossed.takeError());
  }
  auto Gone = instanceAt<Slabs>(Symbols[wire::SlabsInstanceName], "slab service");
  ASSERT_FALSE(bool(Gone));
  EXPECT_NE(toString(Gone.takeError()).find("no slab service at 0x"), std::string::npos);
}

} // namespace
