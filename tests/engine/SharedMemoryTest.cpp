//===- SharedMemoryTest.cpp - Payloads through memory both processes map ---===//
//
// A session with an executor on this machine maps the slabs the executor
// passes it: they go with the session on both sides, and every descriptor,
// address and length the executor sends is checked before this host maps,
// writes or reads anything. The refusals are driven here with real
// descriptors (a pipe, a file, memfds sealed or not, of the size announced
// or not) and hand-written plans, against the host's own SharedPayloads.
//
//===----------------------------------------------------------------------===//

#include "wire/SharedMemory.h"

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Memref.h"
#include "Procfs.h"
#include "TamperRelay.h"
#include "TempDir.h"
#include "Text.h"
#include "TokenFile.h"
#include "transfer/SharedPayloads.h"
#include "wire/Mailbox.h"
#include "wire/Protocol.h"
#include "wire/SocketTransport.h"

#include <algorithm>
#include <fcntl.h>
#include <random>
#include <sstream>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace llvm;
using namespace llvm::orc;
using namespace std::chrono_literals;

namespace {

// Shared memfds of a kind Pid has mapped now (they are named in
// /proc/PID/maps): slabs, or the session's mailbox.
size_t sharedMapsOf(pid_t Pid, const char *Kind = "slab") {
  std::istringstream Maps(readFile("/proc/" + std::to_string(Pid) + "/maps"));
  std::string Name = std::string("/memfd:catalyst-remote-") + Kind;
  size_t N = 0;
  for (std::string Line; std::getline(Maps, Line);)
    N += Line.find(Name) != std::string::npos;
  return N;
}

size_t sharedSlabsOf(pid_t Pid) {
  return sharedMapsOf(Pid);
}

TEST(SharedMemoryTest, SlabsAreMappedForAsLongAsTheSessionOnBothSides) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  size_t Before = sharedSlabsOf(::getpid());
  SessionOptions O;
  O.Transport = TransportKind::Local;
  O.SlabInitial = 1 << 20;
  auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy, O);
  ASSERT_TRUE(S);
  std::vector<pid_t> Pids;
  ASSERT_TRUE(Exec.waitForConnections(1, Pids, 5s));
  std::mt19937_64 Rng(2);
  ASSERT_TRUE(concatMatches(*S, byteInputs({1000, 3000}, Rng)));
  // The input slab and the output area, on each side, and the mailbox.
  EXPECT_EQ(sharedSlabsOf(::getpid()), Before + 2);
  EXPECT_EQ(sharedSlabsOf(Pids[0]), 2u);
  EXPECT_EQ(sharedMapsOf(::getpid(), "mailbox"), 1u);
  EXPECT_EQ(sharedMapsOf(Pids[0], "mailbox"), 1u);
  // A launch larger than the slab replaces it, and the output area grows:
  // the old ones go on both sides.
  ASSERT_TRUE(concatMatches(*S, byteInputs({3 << 20}, Rng)));
  EXPECT_EQ(sharedSlabsOf(::getpid()), Before + 2);
  EXPECT_EQ(sharedSlabsOf(Pids[0]), 2u);
  EXPECT_EQ(messageOf(S->close()), "");
  EXPECT_EQ(sharedSlabsOf(::getpid()), Before);
  EXPECT_EQ(sharedMapsOf(::getpid(), "mailbox"), 0u);
  EXPECT_TRUE(Exec.waitForConnections(0, Pids, 5s)) << "the connection process ends with it";
}

// A small launch and its result go through the mailbox: the socket
// carries at most a doorbell (a header) each way per launch, where each
// message would take a header and its plan.
TEST(SharedMemoryTest, SmallLaunchesGoThroughTheMailbox) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  SessionOptions O;
  O.Transport = TransportKind::Local;
  auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy, O);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(3);
  auto Ins = byteInputs({8, 100}, Rng);
  ASSERT_TRUE(concatMatches(*S, Ins)); // the slab and the output area are passed
  constexpr uint64_t Launches = 200;
  Traffic Start = S->traffic();
  for (uint64_t I = 0; I < Launches; ++I)
    ASSERT_TRUE(concatMatches(*S, Ins)) << "launch " << I;
  Traffic End = S->traffic();
  EXPECT_LE(End.Sent - Start.Sent, Launches * wire::SocketTransport::HeaderSize);
  EXPECT_LE(End.Received - Start.Received, Launches * wire::SocketTransport::HeaderSize);
  EXPECT_EQ(messageOf(S->close()), "");
}

// In shared memory no message carries a launch's inputs: the host's
// message size limit bounds the plan, not an input of twice the limit.
TEST(SharedMemoryTest, TheMessageLimitDoesNotBoundInputsInSharedMemory) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  SessionOptions O;
  O.Transport = TransportKind::Local;
  O.Strategy = Strategy::ZeroCopy;
  O.MaxMessageSize = 1 << 20;
  auto S = openSession(Exec.address(), O);
  ASSERT_TRUE(S);
  ASSERT_EQ(messageOf(S->sendBinary(kernelObject("sleepy"), BinaryFormat::Object)), "");
  // sleepy_flag creates the file its second input names, NUL-terminated.
  TempDir Dir;
  std::string Flag = Dir.path("ran");
  std::vector<char> Path(2 << 20, '\0');
  std::copy(Flag.begin(), Flag.end(), Path.begin());
  auto Ms = makeDenseInput({1}, std::vector<int64_t>{0});
  auto Named = makeDenseInput({int64_t(Path.size())}, 1, Path.data());
  Desc Out(1, 8);
  EXPECT_EQ(messageOf(S->launch({remoteEntry("sleepy_flag"),
                                 "sleepy.o",
                                 {{Ms->D.data(), 1, 8}, {Named->D.data(), 1, 1}},
                                 {{Out.data(), 1, 8}}})),
            "");
  EXPECT_EQ(::access(Flag.c_str(), F_OK), 0) << "the kernel did not run";
  std::free(Out.allocated());
}

// Between launches far apart the executor stops spinning and sleeps on
// the socket: each launch then rings its doorbell, and is served.
TEST(SharedMemoryTest, AnExecutorAsleepOnTheSocketIsRungAwake) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  SessionOptions O;
  O.Transport = TransportKind::Local;
  O.LivenessTimeout = 5s; // a launch nobody woke for fails, rather than hangs
  auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy, O);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(4);
  auto Ins = byteInputs({64}, Rng);
  ASSERT_TRUE(concatMatches(*S, Ins));
  constexpr uint64_t Launches = 10;
  Traffic Start = S->traffic();
  for (uint64_t I = 0; I < Launches; ++I) {
    std::this_thread::sleep_for(20ms); // two hundred times the spin
    ASSERT_TRUE(concatMatches(*S, Ins)) << "launch " << I;
  }
  uint64_t Sent = S->traffic().Sent - Start.Sent;
  EXPECT_GE(Sent, wire::SocketTransport::HeaderSize) << "no doorbell rang";
  EXPECT_LE(Sent, Launches * wire::SocketTransport::HeaderSize) << "no more than doorbells";
  EXPECT_EQ(Sent % wire::SocketTransport::HeaderSize, 0u);
  EXPECT_EQ(messageOf(S->close()), "");
}

// The host reads the TCP connection's setup message out and hangs up, the
// executor's offer taken: that connection's process ends without a word in
// the log and without initializing Catalyst's runtime, which runs once, in
// the process of the local connection; with a secret, both connections
// authenticate.
TEST(SharedMemoryTest, TheConnectionLeftForTheLocalSocketEndsQuietly) {
  for (bool WithSecret : {false, true}) {
    SCOPED_TRACE(WithSecret ? "with a secret" : "without");
    TokenFile Token;
    ExecutorOptions EO;
    if (WithSecret)
      EO.Args = {"--token-file", Token.path()};
    ExecutorProcess Exec;
    ASSERT_TRUE(Exec.start(withRuntimeLog(Token.dir(), EO)));
    SessionOptions O;
    O.Transport = TransportKind::Local;
    if (WithSecret)
      O.Secret = SecretBytes::copyOf(Token.secret());
    auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy, O);
    ASSERT_TRUE(S);
    std::vector<pid_t> Pids;
    ASSERT_TRUE(Exec.waitForConnections(1, Pids, 5s)) << "the TCP one has ended";
    EXPECT_EQ(messageOf(S->close()), "");
    ASSERT_TRUE(Exec.waitForConnections(0, Pids, 5s));
    std::string Hooks = readFile(Token.dir() + "/rt.log");
    std::string Log = readFile(Token.dir() + "/executor.log");
    EXPECT_EQ(std::count(Hooks.begin(), Hooks.end(), '\n'), 2) << Hooks;
    EXPECT_TRUE(mentions(Hooks, "initialize")) << Hooks;
    EXPECT_TRUE(mentions(Log, "connected to local socket")) << Log;
    EXPECT_FALSE(mentions(Log, "error")) << Log;
    EXPECT_FALSE(mentions(Log, "exited with status")) << Log;
  }
}

// A SharedSlab message's plan: kind, base in the executor, bytes.
std::vector<char> slabPlan(wire::SharedSlabKind Kind, uint64_t Base, uint64_t Bytes) {
  std::vector<char> Plan(wire::SPSSharedSlab::size(uint8_t(Kind), ExecutorAddr(Base), Bytes));
  wire::sps::SPSOutputBuffer OB(Plan.data(), Plan.size());
  EXPECT_TRUE(wire::SPSSharedSlab::serialize(OB, uint8_t(Kind), ExecutorAddr(Base), Bytes));
  return Plan;
}

int sealedMemory(uint64_t Bytes) {
  auto Fd = wire::createSealedMemory(Bytes);
  EXPECT_TRUE(bool(Fd)) << toString(Fd.takeError());
  return Fd ? *Fd : -1;
}

int unsealedMemory(uint64_t Bytes) {
  int Fd = ::memfd_create("unsealed", MFD_CLOEXEC);
  EXPECT_EQ(::ftruncate(Fd, off_t(Bytes)), 0);
  return Fd;
}

constexpr uint64_t Page = 4096;
constexpr uint64_t Base = 0x7f0000000000;
constexpr auto Input = wire::SharedSlabKind::Input;
constexpr auto Output = wire::SharedSlabKind::Output;

// Each refusal says why; nothing refused is mapped, every descriptor is
// closed either way.
TEST(SharedMemoryTest, TheHostRefusesSlabsItCannotMapSafely) {
  SharedPayloads Shared(/*SlabCap=*/1 << 20, /*AreaCap=*/1 << 20);
  int Pipe[2];
  ASSERT_EQ(::pipe(Pipe), 0);
  ::close(Pipe[1]);
  FILE *Tmp = std::tmpfile();
  ASSERT_TRUE(Tmp);
  ASSERT_EQ(::ftruncate(::fileno(Tmp), Page), 0);
  struct Case {
    const char *Why;
    std::vector<char> Plan;
    std::vector<int> Fds;
  } Cases[] = {
      {"not a memory file", slabPlan(Input, Base, Page), {Pipe[0]}},
      {"not a memfd", slabPlan(Input, Base, Page), {::dup(::fileno(Tmp))}},
      {"its size is not sealed", slabPlan(Input, Base, Page), {unsealedMemory(Page)}},
      {"it has 4096 bytes, announced as 8192",
       slabPlan(Input, Base, 2 * Page),
       {sealedMemory(Page)}},
      {"more than the", slabPlan(Output, Base, 4 << 20), {sealedMemory(4 << 20)}},
      {"2 descriptors came with it",
       slabPlan(Input, Base, Page),
       {sealedMemory(Page), sealedMemory(Page)}},
      {"0 descriptors came with it", slabPlan(Input, Base, Page), {}},
      {"description is malformed", {1, 2, 3}, {sealedMemory(Page)}},
      {"description is malformed",
       slabPlan(wire::SharedSlabKind(7), Base, Page),
       {sealedMemory(Page)}},
      {"wrap around", slabPlan(Input, UINT64_MAX - 100, Page), {sealedMemory(Page)}},
      {"a mailbox of 4096 bytes, not 65536",
       slabPlan(wire::SharedSlabKind::Mailbox, Base, Page),
       {sealedMemory(Page)}},
      {"no session takes it here",
       slabPlan(wire::SharedSlabKind::Mailbox, Base, wire::Mailbox::Bytes),
       {sealedMemory(wire::Mailbox::Bytes)}},
  };
  for (Case &C : Cases) {
    SCOPED_TRACE(C.Why);
    std::vector<int> Fds = C.Fds;
    std::string Msg = errorText(Shared.accept(C.Plan, std::move(C.Fds)));
    EXPECT_TRUE(mentions(Msg, C.Why)) << Msg;
    for (int Fd : Fds)
      EXPECT_EQ(::fcntl(Fd, F_GETFD), -1) << "descriptor " << Fd << " left open";
    EXPECT_EQ(Shared.mappings(), 0u);
  }
  std::fclose(Tmp);
  // A good one is taken, and then one that overlaps it is not.
  EXPECT_EQ(messageOf(Shared.accept(slabPlan(Input, Base, 2 * Page), {sealedMemory(2 * Page)})),
            "");
  EXPECT_EQ(Shared.mappings(), 1u);
  std::string Msg =
      errorText(Shared.accept(slabPlan(Input, Base + Page, 2 * Page), {sealedMemory(2 * Page)}));
  EXPECT_TRUE(mentions(Msg, "overlaps another")) << Msg;
  EXPECT_EQ(Shared.mappings(), 1u);
}

// A SharedSlab message on a session that maps no shared memory (over TCP;
// a relay slips it in ahead of a launch's result) is refused as a
// malformed slab is: the host closes the connection saying why, and the
// launch waiting fails with that, rather than the message going unseen.
TEST(SharedMemoryTest, ASharedSlabOverTcpEndsTheSessionSayingWhy) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  TamperRelay Relay(Exec.address());
  SessionOptions O;
  O.Transport = TransportKind::Tcp;
  auto S = openWithConcat(Relay.address(), Strategy::ZeroCopy, O);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(6);
  ASSERT_TRUE(concatMatches(*S, byteInputs({64}, Rng)));
  // A header alone: its size, the opcode, a sequence number no launch has,
  // and an empty plan.
  std::vector<char> Frame(wire::SocketTransport::HeaderSize, 0);
  Frame[0] = char(Frame.size());
  Frame[8] = char(wire::PayloadOpcode::SharedSlab);
  Frame[16] = 99;
  Relay.injectNext(TamperRelay::Direction::ToHost, Frame);
  auto Launched = concatMatches(*S, byteInputs({64}, Rng));
  EXPECT_TRUE(Relay.tampered());
  ASSERT_FALSE(Launched) << "the slab went unseen";
  std::string Msg = Launched.message();
  EXPECT_TRUE(mentions(Msg, "the executor sent a shared slab this host cannot take")) << Msg;
  EXPECT_TRUE(mentions(Msg, "this session maps no shared memory")) << Msg;
  EXPECT_FALSE(S->connected());
}

// A SharedResult's plan: the zero-copy result plan of one rank-1 byte
// output of Bytes, its byte count, and its place.
std::vector<char> resultPlan(uint64_t Bytes, std::vector<ExecutorAddr> Where,
                             uint64_t Total = UINT64_MAX) {
  std::vector<wire::ZeroCopyOutput> Outs = {{{int64_t(Bytes)}, Bytes}};
  std::string NoError;
  uint64_t Ns = 0;
  std::vector<char> Inner(wire::SPSZeroCopyResult::size(NoError, Outs, Ns, Ns, Ns, Ns, Ns));
  wire::sps::SPSOutputBuffer IB(Inner.data(), Inner.size());
  EXPECT_TRUE(wire::SPSZeroCopyResult::serialize(IB, NoError, Outs, Ns, Ns, Ns, Ns, Ns));
  Total = Total == UINT64_MAX ? Bytes : Total;
  std::vector<char> Plan(wire::SPSSharedResult::size(Inner, Total, Where));
  wire::sps::SPSOutputBuffer OB(Plan.data(), Plan.size());
  EXPECT_TRUE(wire::SPSSharedResult::serialize(OB, Inner, Total, Where));
  return Plan;
}

// Receives Plan into one rank-1 byte output; the error's text, "" when it
// was received (the output is then freed).
std::string receive(SharedPayloads &Shared, ArrayRef<char> Plan, std::vector<uint8_t> *Got) {
  Desc Out(1, 1);
  LaunchStats Stats;
  ZeroCopyResult R;
  std::string Msg;
  {
    MemrefArg Arg{Out.data(), 1, 1};
    HostOutputs Outputs(Arg, {std::malloc, std::free});
    Msg = messageOf(Shared.receiveShared(Plan, Outputs, R, Stats));
    if (Msg.empty())
      Outputs.commit();
  }
  if (Msg.empty() && Got)
    *Got = Out.values();
  std::free(Out.allocated());
  return Msg;
}

// An output is copied only from memory the host mapped, all of it inside.
TEST(SharedMemoryTest, TheHostReadsOutputsOnlyFromWhatItMapped) {
  SharedPayloads Shared(1 << 20, 1 << 20);
  int Fd = sealedMemory(2 * Page);
  ASSERT_EQ(messageOf(Shared.accept(slabPlan(Output, Base, 2 * Page), {Fd})), "");
  std::vector<uint8_t> Got;
  EXPECT_EQ(receive(Shared, resultPlan(100, {ExecutorAddr(Base + Page)}), &Got), "");
  EXPECT_EQ(Got.size(), 100u);
  struct Case {
    const char *Why;
    std::vector<char> Plan;
  } Cases[] = {
      {"outside the memory shared", resultPlan(100, {ExecutorAddr(Base - 1)})},
      {"outside the memory shared", resultPlan(100, {ExecutorAddr(Base + 2 * Page - 99)})},
      {"outside the memory shared", resultPlan(100, {ExecutorAddr(UINT64_MAX - 10)})},
      {"outside the memory shared", resultPlan(3 * Page, {ExecutorAddr(Base)})},
      {"2 places for 1 outputs", resultPlan(100, {ExecutorAddr(Base), ExecutorAddr(Base)})},
      {"payload of 99 bytes for outputs of 100", resultPlan(100, {ExecutorAddr(Base)}, 99)},
      {"undecodable", {0, 1, 2}},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Why);
    std::string Msg = receive(Shared, C.Plan, nullptr);
    EXPECT_TRUE(mentions(Msg, C.Why)) << Msg;
  }
}

} // namespace
