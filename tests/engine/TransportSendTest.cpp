//===- TransportSendTest.cpp - Sends that fail, on a real socket ----------===//
//
// A failed send either sent nothing, and the connection goes on, or ended
// the connection: after part of a message the peer would take whatever
// comes next for its rest. The transport here is the engine's own, over a
// loopback TCP connection (a Unix socket takes a message whole or not at
// all) whose other end the test reads.
//
//===----------------------------------------------------------------------===//

#include "QuietClient.h"
#include "wire/SocketTransport.h"

#include <future>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace catalyst::remote;
using namespace llvm;
using namespace llvm::orc;

namespace {

// A connected pair of loopback TCP sockets; the second times out reads
// after 10 s.
::testing::AssertionResult tcpPair(int Fds[2]) {
  sockaddr_in A{};
  A.sin_family = AF_INET;
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t Len = sizeof(A);
  int L = socket(AF_INET, SOCK_STREAM, 0);
  bool Ok = L >= 0 && bind(L, reinterpret_cast<sockaddr *>(&A), Len) == 0 && listen(L, 1) == 0 &&
            getsockname(L, reinterpret_cast<sockaddr *>(&A), &Len) == 0;
  Fds[0] = Ok ? socket(AF_INET, SOCK_STREAM, 0) : -1;
  Ok = Ok && Fds[0] >= 0 && connect(Fds[0], reinterpret_cast<sockaddr *>(&A), Len) == 0;
  Fds[1] = Ok ? accept(L, nullptr, nullptr) : -1;
  close(L);
  timeval Timeout{10, 0};
  if (Fds[1] < 0 || setsockopt(Fds[1], SOL_SOCKET, SO_RCVTIMEO, &Timeout, sizeof(Timeout)) != 0)
    return ::testing::AssertionFailure() << "no loopback connection: " << strerror(errno);
  return ::testing::AssertionSuccess();
}

class TransportSendTest : public ::testing::Test {
protected:
  void SetUp() override {
    int Fds[2];
    ASSERT_TRUE(tcpPair(Fds));
    Peer = Fds[1];
    wire::TransportOptions O;
    O.MaxMessageSize = 1 << 20;
    O.Mark = &Mark;
    auto T = wire::SocketTransport::Create(Client, Fds[0], O);
    ASSERT_TRUE(bool(T)) << toString(T.takeError());
    Transport = std::move(*T);
    ASSERT_FALSE(bool(Transport->start()));
  }
  void TearDown() override {
    Transport.reset();
    close(Peer);
  }

  test::QuietClient Client;
  wire::SendMark Mark; // as the executor keeps it
  std::unique_ptr<wire::SocketTransport> Transport;
  int Peer = -1;
};

TEST_F(TransportSendTest, AMessageOverTheLimitIsRefusedBeforeAByteGoes) {
  std::vector<char> Big(1 << 20);
  wire::PayloadPart Part{Big.data(), Big.size(), nullptr};
  Error Err = Transport->sendWithPayload(wire::PayloadOpcode::Launch, 1, {}, Part);
  ASSERT_TRUE(bool(Err));
  EXPECT_NE(toString(std::move(Err)).find("exceeds the limit of 1048576 bytes"), std::string::npos);
  EXPECT_FALSE(Transport->disconnected());
  char Byte;
  EXPECT_EQ(recv(Peer, &Byte, 1, MSG_DONTWAIT), -1) << "nothing reached the peer";
}

// Reads Fd until the end of the connection; the bytes read, or -1 on an
// error (a timeout included).
int64_t readToEnd(int Fd) {
  int64_t Total = 0;
  char Buf[64 * 1024];
  for (;;) {
    ssize_t N = recv(Fd, Buf, sizeof(Buf), 0);
    if (N <= 0)
      return N == 0 ? Total : -1;
    Total += N;
  }
}

// The first part goes out (TCP takes it in chunks), then the second's memory
// cannot be read. (The kernel copies a chunk whole or not at all, so a bad
// address within the first chunk would fail the send before any byte.)
TEST_F(TransportSendTest, ASendThatFailsPartWayEndsTheConnection) {
  long Page = sysconf(_SC_PAGESIZE);
  void *Bad = mmap(nullptr, Page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(Bad, MAP_FAILED);
  std::vector<char> Good(256 << 10, 'g');
  wire::PayloadPart Parts[] = {{Good.data(), Good.size(), nullptr},
                               {static_cast<const char *>(Bad), uint64_t(Page), nullptr}};
  std::future<int64_t> Received = std::async(std::launch::async, readToEnd, Peer);
  Error Err = Transport->sendWithPayload(wire::PayloadOpcode::Launch, 1, {}, Parts);
  munmap(Bad, Page);
  ASSERT_TRUE(bool(Err));
  std::string Msg = toString(std::move(Err));
  uint64_t Total = 32 + Good.size() + Page;
  unsigned long long Written = 0, Of = 0;
  ASSERT_EQ(sscanf(Msg.c_str(), "sending a payload message failed after %llu of its %llu bytes",
                   &Written, &Of),
            2)
      << Msg;
  EXPECT_EQ(Of, Total);
  EXPECT_GT(Written, 0u);
  EXPECT_LT(Written, Total);
  EXPECT_NE(Msg.find("this end closed the connection"), std::string::npos) << Msg;
  EXPECT_TRUE(Transport->disconnected());
  EXPECT_EQ(Transport->closeReason(), Msg);
  EXPECT_EQ(Received.get(), int64_t(Written)) << "the peer sees what went out, then the end";
  EXPECT_FALSE(
      toString(Transport->sendMessage(SimpleRemoteEPCOpcode::CallWrapper, 2, ExecutorAddr(), {}))
          .empty())
      << "nothing more may go";
}

// The executor's listener tells a connection cut between messages from one
// cut in a message's middle by the kernel's count of bytes written and the
// mark the transport leaves: both must agree after every message.
class SendMarkTest : public TransportSendTest {};

TEST_F(SendMarkTest, TheKernelCountsEveryByteWrittenReadOrNot) {
  auto Before = wire::streamWritten(Transport->fd());
  ASSERT_TRUE(Before);
  std::vector<char> Bytes(100000, 'b');
  wire::PayloadPart Part{Bytes.data(), Bytes.size(), nullptr};
  ASSERT_FALSE(bool(Transport->sendWithPayload(wire::PayloadOpcode::Launch, 1, {}, Part)));
  EXPECT_EQ(wire::streamWritten(Transport->fd()), *Before + 32 + Bytes.size()) << "none read yet";
  std::vector<char> Half(50000);
  ASSERT_EQ(recv(Peer, Half.data(), Half.size(), MSG_WAITALL), ssize_t(Half.size()));
  EXPECT_EQ(wire::streamWritten(Transport->fd()), *Before + 32 + Bytes.size());
}

TEST_F(SendMarkTest, EachMessageEndsWhereItsMarkSaid) {
  std::vector<char> Args(777, 'a');
  for (size_t Size : {size_t(0), size_t(777), size_t(13)}) {
    ASSERT_FALSE(bool(Transport->sendMessage(SimpleRemoteEPCOpcode::CallWrapper, 1, ExecutorAddr(),
                                             ArrayRef<char>(Args.data(), Size))));
    EXPECT_FALSE(Mark.Busy);
    EXPECT_EQ(Mark.Until.load(), wire::streamWritten(Transport->fd()));
    // As the listener finds a process that died before it could clear its
    // flag: the message went out whole.
    Mark.Busy = true;
    EXPECT_TRUE(wire::endsBetweenMessages(Transport->fd(), Mark));
    Mark.Until += 1; // one byte short of its end: a cut message
    EXPECT_FALSE(wire::endsBetweenMessages(Transport->fd(), Mark));
    Mark.Until -= 1;
    Mark.Busy = false;
  }
}

TEST_F(SendMarkTest, AClaimedStreamNeverEndsBetweenMessages) {
  ASSERT_TRUE(Transport->claimStream());
  EXPECT_FALSE(wire::endsBetweenMessages(Transport->fd(), Mark));
  EXPECT_FALSE(Transport->claimStream()) << "claimed for good";
}

} // namespace
