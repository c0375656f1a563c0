//===- FailureKindTest.cpp - Errors say what kind of failure they are -----===//
//
// Failure.h itself (a kind survives a prefix and a join; any other error
// is Other), how a host reads the kind an executor's words name, and the
// kinds a program meets through a Session for real: an address where
// nothing listens, a bad argument, a closed session, a crashing kernel, a
// refused token file. Each error keeps its message as it was. Other tests
// assert the kinds of the failures they provoke already: AuthTest (a
// wrong, missing or unproved secret, a stalled handshake), KernelDeathTest
// (each death, a process killed from outside), LivenessTest (a launch past
// its deadline, an executor that stopped answering), ExecutorBoundsTest and
// StartupTest (a busy executor), PoolTest (a lost member, a closed pool).
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Pace.h"
#include "Sockets.h"
#include "TempDir.h"
#include "Text.h"
#include "TokenFile.h"
#include "wire/Handshake.h"
#include "wire/HangupKind.h"

#include <filesystem>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

llvm::Error plain(const std::string &Text) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Text);
}

TEST(FailureTest, AContextPrefixesTheMessageAndKeepsTheKind) {
  auto [Kind, Msg] = reportFailure(
      withContext("outer", withContext("inner", makeFailure(FailureKind::Timeout, "no reply"))));
  EXPECT_EQ(Kind, FailureKind::Timeout);
  EXPECT_EQ(Msg, "outer: inner: no reply");
  EXPECT_FALSE(bool(withContext("nothing", llvm::Error::success())));
}

TEST(FailureTest, AnyOtherErrorIsOther) {
  EXPECT_EQ(reportFailure(plain("plain")).Kind, FailureKind::Other);
  auto [Kind, Msg] = reportFailure(withContext("call", plain("plain")));
  EXPECT_EQ(Kind, FailureKind::Other);
  EXPECT_EQ(Msg, "call: plain");
}

// The first Failure's kind, whatever comes before it; the message is
// toString's, every part of it.
TEST(FailureTest, AJoinReportsItsFirstFailuresKindAndEveryMessage) {
  auto Joined = [] {
    return llvm::joinErrors(plain("first"),
                            llvm::joinErrors(makeFailure(FailureKind::Closed, "second"),
                                             makeFailure(FailureKind::Timeout, "third")));
  };
  std::string Text = llvm::toString(Joined());
  auto [Kind, Msg] = reportFailure(Joined());
  EXPECT_EQ(Kind, FailureKind::Closed);
  EXPECT_EQ(Msg, Text);
  EXPECT_EQ(Msg, "first\nsecond\nthird");
  EXPECT_EQ(reportFailure(withContext("close", Joined())).Kind, FailureKind::Closed);
}

// A host retries on a busy executor's refusal, which it tells from the
// others by its type; a program sees it as Busy.
TEST(FailureTest, AnExecutorBusyRefusalIsABusyFailure) {
  llvm::Error Err = llvm::make_error<wire::ExecutorBusy>("executor busy: try again");
  EXPECT_TRUE(Err.isA<wire::ExecutorBusy>());
  auto [Kind, Msg] = reportFailure(withContext("cannot open", std::move(Err)));
  EXPECT_EQ(Kind, FailureKind::Busy);
  EXPECT_EQ(Msg, "cannot open: executor busy: try again");
}

// What the executor's refusals and crash reports begin with, as it writes
// them; anything else is what the caller says it is.
TEST(FailureTest, AnExecutorsWordsNameTheirKind) {
  const std::pair<std::string, FailureKind> Said[] = {
      {"authentication failed: the host's proof does not match", FailureKind::Authentication},
      {"authentication failed on the executor: no HMAC", FailureKind::Authentication},
      {"a socket file serves only the executor's own user: uid 0", FailureKind::Authentication},
      {"executor busy: too many connections", FailureKind::Busy},
      {"executor at capacity: 2 sessions (--max-connections)", FailureKind::Busy},
      {"the kernel crashed the executor's connection process 42 with signal 11 (Segmentation "
       "fault)",
       FailureKind::KernelCrashed},
      {"the executor's connection process 42 was killed by signal 9 (Killed)",
       FailureKind::ExecutorLost},
  };
  for (const auto &[Text, Kind] : Said)
    EXPECT_EQ(wire::hangupKind(Text, FailureKind::ExecutorLost), Kind) << Text;
  EXPECT_EQ(wire::hangupKind("going away", FailureKind::Other), FailureKind::Other);
}

// Failures, each with the message it must have.
using Seen = std::vector<std::pair<FailureReport, std::string>>;

// Every failure in All is of kind Kind, its message unchanged.
void expectKind(FailureKind Kind, const Seen &All) {
  for (const auto &[R, Says] : All) {
    EXPECT_EQ(R.Kind, Kind) << R.Message;
    EXPECT_EQ(R.Message, Says);
  }
}

// Nothing listens at the address: no executor there to reach.
TEST(FailureKindWithoutSessionTest, NothingListeningIsUnreachable) {
  LoopbackSocket Refusing(/*Listen=*/false);
  TempDir Dir;
  std::string File = "unix:" + Dir.path("nobody.sock");
  expectKind(FailureKind::Unreachable,
             {{failureOf(Session::open(Refusing.address()).takeError()),
               "cannot connect to " + Refusing.address() + ": Connection refused"},
              {failureOf(Session::open(File).takeError()),
               "cannot connect to " + File + ": No such file or directory"}});
}

TEST(FailureKindWithoutSessionTest, AMalformedAddressOrOptionIsABadArgument) {
  expectKind(FailureKind::BadArgument,
             {{failureOf(Session::open("no-port-here").takeError()),
               "address 'no-port-here' is not host:port"},
              {failureOf(parseStrategy("fast").takeError()),
               "unknown transfer strategy 'fast': use naive, batched, zerocopy or auto"},
              {failureOf(parseTransport("udp").takeError()),
               "unknown transport 'udp': use auto, tcp or local"},
              {failureOf(parseWire("ssl").takeError()),
               "unknown wire protection 'ssl': use auto, plain or tls"}});
}

// A token file a host refuses to read leaves it without its secret.
TEST(FailureKindWithoutSessionTest, ARefusedTokenFileIsAnAuthenticationFailure) {
  TokenFile Token;
  ASSERT_EQ(::chmod(Token.path().c_str(), 0644), 0);
  std::string Missing = Token.dir() + "/missing";
  expectKind(FailureKind::Authentication,
             {{failureOf(readTokenFile(Token.path()).takeError()),
               "token file " + Token.path() +
                   ": group or others may access it (mode 0644); run chmod 600 " + Token.path()},
              {failureOf(readTokenFile(Missing).takeError()),
               "token file " + Missing + ": cannot open: No such file or directory"}});
}

class FailureKindTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(Exec.start());
    S = openSession(Exec.address());
    ASSERT_TRUE(S);
  }

  // A launch of map_r1_e4 (map.o need not have been sent: arguments are
  // checked first) with In and Out as its memrefs, and Into its lent
  // buffers.
  FailureReport launchMap(void *In, void *Out, std::vector<llvm::MutableArrayRef<char>> Into = {}) {
    MemrefArg InArg{In, 1, 4}, OutArg{Out, 1, 4};
    return failureOf(S->launch({remoteEntry("map_r1_e4"), "map.o", {InArg}, {OutArg}, Into}));
  }

  ExecutorProcess Exec;
  std::unique_ptr<Session> S;
};

TEST_F(FailureKindTest, BadLaunchArgumentsAndFilesAreBadArguments) {
  Desc In(1, 4), Out(1, 4);
  expectKind(
      FailureKind::BadArgument,
      {{launchMap(nullptr, Out.data()), "input 0: null descriptor"},
       {launchMap(In.data(), nullptr), "output 0: null descriptor"},
       {launchMap(In.data(), Out.data(), {{}, {}}),
        "2 buffers to receive outputs into, for 1 outputs"},
       {failureOf(S->sendBinary("/nonexistent/k.o", BinaryFormat::Object)),
        "cannot read object '/nonexistent/k.o': No such file or directory"},
       {failureOf(S->sendBinary("/nonexistent/w.bin", BinaryFormat::Asset)),
        "sending asset '/nonexistent/w.bin' failed: cannot read asset '/nonexistent/w.bin': No "
        "such file or directory"},
       {failureOf(S->sendBinary(kernelObject("map"), BinaryFormat(9))),
        "unknown binary format 9 for '" + kernelObject("map") + "' (0 is an object, 1 an asset)"},
       {failureOf(S->await(4711)), "no pending launch 4711 in this session (already awaited?)"}});
  EXPECT_TRUE(S->connected()) << "no bad argument ends the session";
}

// Every call on a session its caller closed, including a launch queued
// before the close.
TEST_F(FailureKindTest, CallsOnAClosedSessionFailAsClosed) {
  ASSERT_EQ(messageOf(S->close()), "");
  std::string Closed = "the session with " + Exec.address() + " is closed";
  // The queued launch has outputs of its own: it runs, and zeroes them,
  // on the session's thread while the calls below run on this one.
  Desc In(1, 4), Out(1, 4), QueuedOut(1, 4);
  uint64_t Ticket = S->launchAsync(
      {remoteEntry("map_r1_e4"), "map.o", {{In.data(), 1, 4}}, {{QueuedOut.data(), 1, 4}}});
  expectKind(FailureKind::Closed,
             {{failureOf(S->ping()), Closed},
              {failureOf(S->sendBinary(kernelObject("map"), BinaryFormat::Object)), Closed},
              {failureOf(S->callWrapper("anything", {}).takeError()), Closed},
              {launchMap(In.data(), Out.data()),
               "launch of '" + remoteEntry("map_r1_e4") + "' failed: " + Closed},
              {failureOf(S->await(Ticket)),
               "launch of '" + remoteEntry("map_r1_e4") + "' failed: " + Closed}});
}

// A launch in flight when another thread closes the session fails as
// Closed too: the close ended its connection under it.
TEST_F(FailureKindTest, ALaunchInFlightWhenTheSessionClosesFailsAsClosed) {
  ASSERT_EQ(messageOf(S->sendBinary(kernelObject("sleepy"), BinaryFormat::Object)), "");
  TempDir Dir;
  std::string Flag = Dir.path("started");
  int64_t Ms = 20000;
  auto MsArg = makeDenseInput<int64_t>({1}, {Ms});
  auto FlagArg = makeDenseInput({int64_t(Flag.size() + 1)}, 1, Flag.c_str());
  Desc Out(1, 8);
  FailureReport R;
  std::thread Launch([&] {
    R = failureOf(S->launch({remoteEntry("sleepy_flag"),
                             "sleepy.o",
                             {{MsArg->D.data(), 1, 8}, {FlagArg->D.data(), 1, 1}},
                             {{Out.data(), 1, 8}}}));
  });
  auto Deadline = std::chrono::steady_clock::now() + paced(10s);
  while (!std::filesystem::exists(Flag) && std::chrono::steady_clock::now() < Deadline)
    std::this_thread::sleep_for(5ms);
  bool Started = std::filesystem::exists(Flag);
  EXPECT_EQ(messageOf(S->close()), "");
  Launch.join();
  ASSERT_TRUE(Started) << "the kernel did not start within 10 s: " << R.Message;
  EXPECT_EQ(R.Kind, FailureKind::Closed) << R.Message;
  EXPECT_EQ(R.Message, "launch of '" + remoteEntry("sleepy_flag") +
                           "' failed: the connection to the executor at " + Exec.address() +
                           " closed: the session was closed while a call was in flight");
}

// The executor names the crash; a later call finds the executor gone.
TEST_F(FailureKindTest, ACrashingKernelIsAKernelCrash) {
  ASSERT_EQ(messageOf(S->sendBinary(kernelObject("crash"), BinaryFormat::Object)), "");
  auto [Kind, Msg] = failureOf(S->launch({remoteEntry("crash"), "crash.o", {}, {}}));
  EXPECT_EQ(Kind, FailureKind::KernelCrashed) << Msg;
  std::string Prefix = "launch of '" + remoteEntry("crash") +
                       "' failed: the connection to the executor at " + Exec.address() +
                       " closed, the executor saying: \"the kernel crashed the executor's "
                       "connection process ";
  EXPECT_EQ(Msg.substr(0, Prefix.size()), Prefix);
  EXPECT_TRUE(mentions(Msg, " with signal 11 (Segmentation fault)\"")) << Msg;
  FailureReport After = failureOf(S->ping());
  EXPECT_EQ(After.Kind, FailureKind::ExecutorLost) << After.Message;
  EXPECT_EQ(After.Message.rfind("the session with " + Exec.address() +
                                    " is closed since its connection closed, the executor saying: ",
                                0),
            0u)
      << After.Message;
}

} // namespace
