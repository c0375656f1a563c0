//===- FailureKindTest.cpp - The bindings' statuses are failure kinds -----===//
//
// RemoteBindings.h's calls return a failure's kind as their status, the
// message staying in __catalyst__remote__last_error(): what a binding
// raises an exception of its own kind from. Provoked for real here: an
// address where nothing listens, a refused secret, a bad option, a bad
// argument, a crashing kernel, a launch past its deadline.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"
#include "Sockets.h"
#include "Text.h"
#include "TokenFile.h"
#include "catalyst/remote/RemoteBindings.h"

#include <sys/stat.h>

using namespace catalyst::remote::test;

namespace {

// A status with the message that came with it.
struct Status {
  int32_t Kind;
  std::string Message;
};

std::string lastMessage() {
  return __catalyst__remote__last_error();
}

class FailureKindTest : public CapiTest {
protected:
  // Opens Address through the bindings with Options; a handle opened is
  // the test's Session.
  Status open(const std::string &Address, std::vector<const char *> Options = {}) {
    int64_t H = 0;
    int32_t Kind = catalyst_remote_open(Address.c_str(), Options.data(), Options.size(), &H);
    Session.reset(H);
    return {Kind, Kind ? lastMessage() : ""};
  }

  Status launch(const std::string &Entry, const std::string &Object, const InputList &Inputs,
                Outputs &Out) {
    int32_t Kind = launchStatus(Session.get(), Entry, Object, Inputs, Out);
    return {Kind, Kind ? lastMessage() : ""};
  }

  // Whose failure is "call: launch of 'Entry' failed: " and then Rest.
  std::string launchFailed(const std::string &Entry, const std::string &Rest) {
    return "launch: launch of '" + Entry + "' failed: " + Rest;
  }
};

TEST_F(FailureKindTest, OpenSaysWhyItFailedByItsStatus) {
  LoopbackSocket Refusing(/*Listen=*/false);
  Status S = open(Refusing.address());
  EXPECT_EQ(S.Kind, CATALYST_REMOTE_UNREACHABLE) << S.Message;
  EXPECT_EQ(S.Message, "open: cannot connect to " + Refusing.address() + ": Connection refused");
  EXPECT_EQ(Session.get(), 0);

  TokenFile Token, Other;
  ASSERT_TRUE(Exec.start({false, {}, {}, {"--token-file", Token.path()}}));
  std::string Wrong = "token=" + Other.secret();
  S = open(Exec.address(), {Wrong.c_str()});
  EXPECT_EQ(S.Kind, CATALYST_REMOTE_AUTHENTICATION) << S.Message;
  EXPECT_TRUE(mentions(S.Message, "open: cannot open a session with " + Exec.address() +
                                      ": the executor refused the connection, saying: "
                                      "\"authentication failed"))
      << S.Message;
  ASSERT_EQ(::chmod(Other.path().c_str(), 0644), 0);
  std::string Open = "token_file=" + Other.path();
  S = open(Exec.address(), {Open.c_str()});
  EXPECT_EQ(S.Kind, CATALYST_REMOTE_AUTHENTICATION) << S.Message;
  EXPECT_TRUE(mentions(S.Message, "group or others may access it (mode 0644)")) << S.Message;
  S = open(Exec.address(), {"liveness_ms=soon"});
  EXPECT_EQ(S.Kind, CATALYST_REMOTE_BAD_ARGUMENT) << S.Message;
  EXPECT_TRUE(mentions(S.Message, "liveness_ms=soon")) << S.Message;
  std::string Right = "token=" + Token.secret();
  S = open(Exec.address(), {Right.c_str()});
  EXPECT_EQ(S.Kind, CATALYST_REMOTE_OK) << S.Message;
}

// Bad arguments leave the session serving; the crash ends it, and every
// launch after it finds the executor's connection process gone.
TEST_F(FailureKindTest, LaunchSaysWhyItFailedByItsStatus) {
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  ASSERT_NO_FATAL_FAILURE(sendKernel("crash"));
  void *Null[] = {nullptr};
  size_t One[] = {1}, Four[] = {4};
  EXPECT_EQ(catalyst_remote_launch(Session.get(), remoteEntry("map_r1_e4").c_str(), "map.o", 1,
                                   Null, One, Four, 0, nullptr, nullptr, nullptr),
            CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_EQ(lastMessage(), "launch: input 0: null descriptor");
  Outputs None({});
  Status S = launch(remoteEntry("crash"), "crash.o", {}, None);
  EXPECT_EQ(S.Kind, CATALYST_REMOTE_KERNEL_CRASHED) << S.Message;
  std::string Closed =
      launchFailed(remoteEntry("crash"), "the connection to the executor at " + Exec.address() +
                                             " closed, the executor saying: "
                                             "\"the kernel crashed");
  EXPECT_TRUE(mentions(S.Message, Closed)) << S.Message;
  S = launch(remoteEntry("crash"), "crash.o", {}, None);
  EXPECT_EQ(S.Kind, CATALYST_REMOTE_EXECUTOR_LOST) << S.Message;
  EXPECT_TRUE(
      mentions(S.Message, launchFailed(remoteEntry("crash"), "the session with " + Exec.address() +
                                                                 " is closed since its connection "
                                                                 "closed")))
      << S.Message;
  int64_t Unknown = Session.get() + 1000;
  S.Kind = launchStatus(Unknown, remoteEntry("crash"), "crash.o", {}, None);
  EXPECT_EQ(S.Kind, CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_EQ(lastMessage(), "launch: unknown session handle " + std::to_string(Unknown));
  EXPECT_TRUE(FailureLog::all().empty()) << "the bindings report by status alone";
}

TEST_F(FailureKindTest, ALaunchPastItsDeadlineIsATimeout) {
  ASSERT_TRUE(Exec.start());
  ASSERT_EQ(open(Exec.address(), {"launch_timeout_ms=300"}).Message, "");
  ASSERT_NO_FATAL_FAILURE(sendKernel("sleepy"));
  auto Ms = makeDenseInput<int64_t>({1}, {20000});
  Outputs Out({{1, 8}});
  Status S = launch(remoteEntry("sleepy"), "sleepy.o", {&Ms->D}, Out);
  EXPECT_EQ(S.Kind, CATALYST_REMOTE_TIMEOUT) << S.Message;
  EXPECT_TRUE(mentions(S.Message,
                       launchFailed(remoteEntry("sleepy"), "the connection to the executor at " +
                                                               Exec.address() +
                                                               " closed: a launch did not finish "
                                                               "within 300 ms")))
      << S.Message;
  EXPECT_TRUE(Out[0].allZero());
}

} // namespace
