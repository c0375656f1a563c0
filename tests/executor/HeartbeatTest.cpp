//===- HeartbeatTest.cpp - A busy executor's heartbeats, alone ------------===//
//
// The heartbeat thread (executor/Heartbeat.h) over a real transport on one
// end of a socket pair whose other end the test reads as the host would:
// work that outlasts the interval sends heartbeat frames, shorter work none;
// a host gone while work is in progress ends the process, unless the work
// already sent its reply; stop() returns at once; stopWhenIdle() shuts the
// socket down when the work in progress ends, or at once when there is none. LivenessTest sees it in a real executor.
//
// The heartbeat is one per process, stopped for good, and the stop and the
// host gone end or mark the whole process: each scenario runs in a child
// process of its own (a death test), which exits 0 when the scenario holds
// and otherwise says why on stderr.
//
//===----------------------------------------------------------------------===//

#include "../../executor/Heartbeat.h"

#include "../support/Pace.h"
#include "../support/QuietClient.h"
#include "../support/Signals.h"
#include "wire/Protocol.h"
#include "wire/SocketTransport.h"

#include <future>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::executor;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;
using namespace llvm;

namespace {

// The executor's end, a transport the heartbeat is attached to, and the
// host's end, a bare socket.
struct Connection {
  QuietClient Client;
  std::unique_ptr<wire::SocketTransport> Transport;
  int Host = -1;

  // As a connection does, the beating thread stops before the transport
  // goes, also when a scenario returns early.
  ~Connection() {
    if (Transport)
      Heartbeat::get().stop();
  }

  // Empty, or why it could not be opened.
  std::string open(const wire::TransportOptions &Options = wire::TransportOptions()) {
    int Fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, Fds) != 0)
      return "no socket pair";
    Host = Fds[1];
    auto T = wire::SocketTransport::Create(Client, Fds[0], Options);
    if (!T)
      return "no transport: " + toString(T.takeError());
    Transport = std::move(*T);
    Heartbeat::get().attach(*Transport);
    return "";
  }

  // What the host end has, within Limit: POLLIN for a frame or the end.
  bool hostReadable(std::chrono::milliseconds Limit) {
    pollfd P{Host, POLLIN, 0};
    return ::poll(&P, 1, int(Limit.count())) > 0;
  }

  // Reads one frame header from the host end; empty, or what went wrong.
  std::string readHeartbeat(std::chrono::milliseconds Limit) {
    if (!hostReadable(Limit))
      return "no frame came within " + std::to_string(Limit.count()) + " ms";
    char H[wire::FrameHeaderSize];
    size_t Got = 0;
    while (Got < sizeof(H)) {
      ssize_t N = ::read(Host, H + Got, sizeof(H) - Got);
      if (N <= 0)
        return "the connection ended after " + std::to_string(Got) + " bytes";
      Got += size_t(N);
    }
    wire::FrameHeader F = wire::decodeHeader(H);
    if (F.OpC != wire::HeartbeatOpcode || F.Size != wire::FrameHeaderSize)
      return "a frame with opcode " + std::to_string(F.OpC) + " and size " +
             std::to_string(F.Size) + " instead of a heartbeat";
    return "";
  }
};

// Ends the child: 0 when Complaint is empty.
[[noreturn]] void finish(const std::string &Complaint) {
  if (!Complaint.empty())
    std::fprintf(stderr, "%s\n", Complaint.c_str());
  std::fflush(stderr);
  ::_exit(Complaint.empty() ? 0 : 1);
}

// stop(), bounded: empty, or why not.
std::string stopWithin(std::chrono::milliseconds Limit) {
  auto Stopped = std::async(std::launch::async, [] { Heartbeat::get().stop(); });
  return Stopped.wait_for(Limit) == std::future_status::ready ? "" : "stop() did not return";
}

std::string beatsWhileWorkOutlastsTheInterval() {
  Connection C;
  if (std::string Why = C.open(); !Why.empty())
    return Why;
  constexpr auto Interval = 50ms;
  Heartbeat::get().enable(Interval);
  auto Began = std::chrono::steady_clock::now();
  {
    Heartbeat::Busy Working;
    for (int I = 0; I < 3; ++I)
      if (std::string Why = C.readHeartbeat(paced(5s)); !Why.empty())
        return "heartbeat " + std::to_string(I) + ": " + Why;
  }
  if (std::chrono::steady_clock::now() - Began < 3 * Interval)
    return "three heartbeats came sooner than three intervals";
  if (std::string Why = stopWithin(paced(5s)); !Why.empty())
    return Why;
  // Counted once sent, so only final once the thread is joined.
  return C.Transport->heartbeats() < 3 ? "the transport counted fewer heartbeats than were read"
                                       : "";
}

// Work that ends within the interval, again and again over several of the
// thread's checks, costs no frame.
std::string shortWorkSendsNothing() {
  Connection C;
  if (std::string Why = C.open(); !Why.empty())
    return Why;
  const auto Interval = paced(std::chrono::milliseconds(300));
  Heartbeat::get().enable(Interval);
  auto Until = std::chrono::steady_clock::now() + 3 * Interval;
  while (std::chrono::steady_clock::now() < Until) {
    Heartbeat::Busy Working;
    std::this_thread::sleep_for(10ms);
  }
  if (std::string Why = stopWithin(paced(5s)); !Why.empty())
    return Why;
  return C.hostReadable(0ms) ? "short work sent the host something" : "";
}

// A host asking for beats every millisecond gets them every 10 ms at most
// (wire::MinHeartbeatInterval), and the thread does not spin meanwhile.
std::string anIntervalBelowTheFloorIsRaisedToIt() {
  Connection C;
  if (std::string Why = C.open(); !Why.empty())
    return Why;
  Heartbeat::get().enable(1ms);
  auto Began = std::chrono::steady_clock::now();
  {
    Heartbeat::Busy Working;
    if (std::string Why = C.readHeartbeat(paced(5s)); !Why.empty())
      return "the first heartbeat: " + Why;
    std::this_thread::sleep_for(200ms);
  }
  auto Worked = std::chrono::steady_clock::now() - Began;
  if (std::string Why = stopWithin(paced(5s)); !Why.empty())
    return Why;
  // Counted once sent, so only final once the thread is joined.
  uint64_t Most = uint64_t(Worked / wire::MinHeartbeatInterval) + 1;
  uint64_t Beats = C.Transport->heartbeats();
  return Beats <= Most ? ""
                       : std::to_string(Beats) + " heartbeats in " + std::to_string(Worked / 1ms) +
                             " ms, more than " + std::to_string(Most);
}

// The host closed its end while a kernel runs: nobody will read the
// result, so the process ends (exit status 3) and says why.
std::string hostGoneUnderWork() {
  Connection C;
  if (std::string Why = C.open(); !Why.empty())
    return Why;
  Heartbeat::get().enable(50ms);
  Heartbeat::Busy Working;
  ::close(C.Host);
  Signals Never;
  Never.waitFor(1, paced(10s));
  return "the process went on with the host gone";
}

// The host read the reply and closed at once, before the work that sent
// it ended (its thread was preempted, say): nothing is owed to the host
// then, so the process goes on and the work ends as it would.
std::string hostGoneAfterTheReply() {
  Connection C;
  wire::TransportOptions Options;
  Options.BeforeReply = Heartbeat::answering;
  if (std::string Why = C.open(Options); !Why.empty())
    return Why;
  Heartbeat::get().enable(wire::MinHeartbeatInterval);
  Heartbeat::Busy Working;
  if (auto Err =
          C.Transport->sendMessage(orc::SimpleRemoteEPCOpcode::Result, 1, orc::ExecutorAddr(), {}))
    return "the reply was not sent: " + toString(std::move(Err));
  ::close(C.Host);
  // Ten looks of the beating thread at the host gone, which would end the
  // process at the first with the work still owed.
  std::this_thread::sleep_for(5 * wire::MinHeartbeatInterval);
  return "";
}

// The thread waits half an interval between checks: stop() must wake it.
std::string stopReturnsAtOnce() {
  Connection C;
  if (std::string Why = C.open(); !Why.empty())
    return Why;
  Heartbeat::get().enable(std::chrono::hours(1));
  return stopWithin(paced(5s));
}

std::string stopWhenIdleWaitsForTheWork() {
  Connection C;
  if (std::string Why = C.open(); !Why.empty())
    return Why;
  {
    Heartbeat::Busy Working;
    Heartbeat::stopWhenIdle(C.Transport->fd());
    if (C.hostReadable(0ms))
      return "the socket was shut down under the work in progress";
  }
  if (!C.hostReadable(paced(5s)))
    return "the socket was not shut down once the work ended";
  char Byte;
  return ::read(C.Host, &Byte, 1) == 0 ? "" : "the host read something else than the end";
}

std::string stopWhenIdleWithNoWorkIsImmediate() {
  Connection C;
  if (std::string Why = C.open(); !Why.empty())
    return Why;
  Heartbeat::stopWhenIdle(C.Transport->fd());
  char Byte;
  return C.hostReadable(0ms) && ::read(C.Host, &Byte, 1) == 0 ? "" : "the socket is still open";
}

class HeartbeatTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(HeartbeatTest, BeatsWhileWorkOutlastsTheInterval) {
  EXPECT_EXIT(finish(beatsWhileWorkOutlastsTheInterval()), ::testing::ExitedWithCode(0), "");
}

TEST_F(HeartbeatTest, ShortWorkSendsNothing) {
  EXPECT_EXIT(finish(shortWorkSendsNothing()), ::testing::ExitedWithCode(0), "");
}

TEST_F(HeartbeatTest, AnIntervalBelowTheFloorIsRaisedToIt) {
  EXPECT_EXIT(finish(anIntervalBelowTheFloorIsRaisedToIt()), ::testing::ExitedWithCode(0), "");
}

TEST_F(HeartbeatTest, AHostGoneUnderWorkEndsTheProcess) {
  EXPECT_EXIT(finish(hostGoneUnderWork()), ::testing::ExitedWithCode(3),
              "the host closed the connection; ending the connection process");
}

TEST_F(HeartbeatTest, AHostGoneAfterTheReplyLeavesTheProcessAlone) {
  EXPECT_EXIT(finish(hostGoneAfterTheReply()), ::testing::ExitedWithCode(0), "");
}

TEST_F(HeartbeatTest, StopReturnsAtOnce) {
  EXPECT_EXIT(finish(stopReturnsAtOnce()), ::testing::ExitedWithCode(0), "");
}

TEST_F(HeartbeatTest, StopWhenIdleWaitsForTheWorkInProgress) {
  EXPECT_EXIT(finish(stopWhenIdleWaitsForTheWork()), ::testing::ExitedWithCode(0), "");
}

TEST_F(HeartbeatTest, StopWhenIdleWithNoWorkShutsTheSocketAtOnce) {
  EXPECT_EXIT(finish(stopWhenIdleWithNoWorkIsImmediate()), ::testing::ExitedWithCode(0), "");
}

} // namespace
