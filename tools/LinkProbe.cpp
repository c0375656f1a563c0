//===- LinkProbe.cpp - catalyst-remote-linkprobe --------------------------===//
//
// Measures a TCP path the way a launch uses it: round trips of small messages
// and one-way bulk streams, over one connection with TCP_NODELAY.
//
//   catalyst-remote-linkprobe server --bind HOST:PORT [--connections N]
//   catalyst-remote-linkprobe pingpong SIZE COUNT --connect HOST:PORT
//   catalyst-remote-linkprobe stream BYTES --connect HOST:PORT [--count N]
//                             [--reverse] [--verify]
//
// The client sends a header naming the test; the server runs its half and
// waits for the next header until the client closes. Results are one line on
// stdout of KEY=VALUE fields, so scripts can pick them out.
//
//===----------------------------------------------------------------------===//

#include "NetUtil.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>
#include <poll.h>
#include <string>
#include <vector>

using namespace catalyst::remote::tools;

namespace {

const char *Usage =
    "usage: catalyst-remote-linkprobe server --bind HOST:PORT [--connections N]\n"
    "       catalyst-remote-linkprobe pingpong SIZE COUNT --connect HOST:PORT [--warmup N]\n"
    "       catalyst-remote-linkprobe stream BYTES --connect HOST:PORT [--count N]\n"
    "                                 [--reverse] [--verify]\n"
    "\n"
    "  pingpong   COUNT round trips of SIZE bytes each way; prints the median,\n"
    "             10th and 90th percentile and minimum round-trip time\n"
    "  stream     BYTES one way (client to server; --reverse: server to client),\n"
    "             COUNT times (default 3), timed until the last byte is in; prints\n"
    "             the median payload throughput\n"
    "  --verify   fill the stream with a position-dependent pattern and check it\n"
    "             on arrival (byte order and content through relays)\n"
    "  --timeout-s S     give up after S seconds (default 300; server: S without\n"
    "                    a connection, or S of silence inside one)\n"
    "  --connections N   server: exit after serving N connections\n"
    "SIZE and BYTES take K, M, G suffixes (powers of 1024).\n";

constexpr uint32_t Magic = 0x504c5243; // "CRLP"
enum Mode : uint32_t { PingPong = 1, StreamUp = 2, StreamDown = 3 };
constexpr uint32_t FlagVerify = 1;

struct Header {
  uint32_t Magic;
  uint32_t Mode;
  uint64_t Size;
  uint64_t Count;
  uint32_t Flags;
  uint32_t Reserved;
};
static_assert(sizeof(Header) == 32, "the header is sent as it is laid out");

constexpr size_t StreamBuffer = 1 << 20;

[[noreturn]] void fail(const std::string &Why) {
  std::fprintf(stderr, "catalyst-remote-linkprobe: %s\n", Why.c_str());
  std::exit(1);
}

void onAlarm(int) {
  const char Msg[] = "catalyst-remote-linkprobe: timed out\n";
  [[maybe_unused]] ssize_t N = ::write(2, Msg, sizeof(Msg) - 1);
  ::_exit(3);
}

bool parseSize(const std::string &Text, uint64_t &Out) {
  char *End = nullptr;
  errno = 0;
  unsigned long long V = std::strtoull(Text.c_str(), &End, 10);
  if (errno != 0 || End == Text.c_str())
    return false;
  std::string Suffix = End;
  unsigned Shift = 0;
  if (Suffix == "K" || Suffix == "KiB")
    Shift = 10;
  else if (Suffix == "M" || Suffix == "MiB")
    Shift = 20;
  else if (Suffix == "G" || Suffix == "GiB")
    Shift = 30;
  else if (!Suffix.empty())
    return false;
  Out = uint64_t(V) << Shift;
  return (Out >> Shift) == V;
}

// The verification pattern: 8-byte words, each a mix of its index, laid out
// little-endian, so any byte's expected value follows from its offset alone.
uint64_t patternWord(uint64_t Index) {
  uint64_t X = Index + 0x9e3779b97f4a7c15ull;
  X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ull;
  X = (X ^ (X >> 27)) * 0x94d049bb133111ebull;
  return X ^ (X >> 31);
}

void fillPattern(char *Buf, uint64_t Offset, size_t Len) {
  size_t I = 0;
  for (; I < Len && (Offset + I) % 8 != 0; ++I)
    Buf[I] = char(patternWord((Offset + I) / 8) >> (8 * ((Offset + I) % 8)));
  for (; I + 8 <= Len; I += 8) {
    uint64_t W = patternWord((Offset + I) / 8);
    std::memcpy(Buf + I, &W, 8); // the tools run on little-endian hosts only
  }
  for (; I < Len; ++I)
    Buf[I] = char(patternWord((Offset + I) / 8) >> (8 * ((Offset + I) % 8)));
}

void setTimeouts(int Fd, unsigned Seconds) {
  timeval T{};
  T.tv_sec = Seconds;
  // Not checked: a valid timeval fails only on a descriptor that is no open
  // socket, and the read or send it bounds then fails at once the same way.
  ::setsockopt(Fd, SOL_SOCKET, SO_RCVTIMEO, &T, sizeof(T));
  ::setsockopt(Fd, SOL_SOCKET, SO_SNDTIMEO, &T, sizeof(T));
}

// Sends Total bytes of the stream (the pattern when Verify).
bool sendStream(int Fd, uint64_t Total, bool Verify, char *Buf) {
  if (!Verify)
    std::memset(Buf, 0xa5, StreamBuffer);
  for (uint64_t Off = 0; Off < Total;) {
    size_t Len = size_t(std::min<uint64_t>(StreamBuffer, Total - Off));
    if (Verify)
      fillPattern(Buf, Off, Len);
    if (!writeAll(Fd, Buf, Len))
      return false;
    Off += Len;
  }
  return true;
}

// Receives Total bytes; with Verify, checks each against the pattern and
// fails naming the first wrong offset.
bool receiveStream(int Fd, uint64_t Total, bool Verify, char *Buf, char *Expected) {
  for (uint64_t Off = 0; Off < Total;) {
    size_t N = size_t(std::min<uint64_t>(StreamBuffer, Total - Off));
    if (!readAll(Fd, Buf, N))
      return false;
    if (Verify) {
      fillPattern(Expected, Off, N);
      if (std::memcmp(Buf, Expected, N) != 0) {
        size_t I = 0;
        while (Buf[I] == Expected[I])
          ++I;
        fail("stream corrupted at byte " + std::to_string(Off + I) + " of " +
             std::to_string(Total));
      }
    }
    Off += N;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Server
//===----------------------------------------------------------------------===//

// Serves tests on one connection until the client closes it.
void serveConnection(int Fd) {
  std::unique_ptr<char[]> Buf(new char[StreamBuffer]), Expected(new char[StreamBuffer]);
  std::vector<char> Message;
  Header H;
  while (readAll(Fd, &H, sizeof(H))) {
    if (H.Magic != Magic) {
      std::fprintf(stderr, "catalyst-remote-linkprobe: bad header, closing\n");
      return;
    }
    bool Verify = H.Flags & FlagVerify;
    bool Ok = true;
    if (H.Mode == PingPong) {
      Message.resize(std::max<uint64_t>(H.Size, 1));
      for (uint64_t I = 0; Ok && I < H.Count; ++I)
        Ok = readAll(Fd, Message.data(), H.Size) && writeAll(Fd, Message.data(), H.Size);
    } else if (H.Mode == StreamUp) {
      for (uint64_t I = 0; Ok && I < H.Count; ++I)
        Ok = receiveStream(Fd, H.Size, Verify, Buf.get(), Expected.get()) && writeAll(Fd, "k", 1);
    } else if (H.Mode == StreamDown) {
      char Go;
      for (uint64_t I = 0; Ok && I < H.Count; ++I)
        Ok = readAll(Fd, &Go, 1) && sendStream(Fd, H.Size, Verify, Buf.get());
    } else {
      std::fprintf(stderr, "catalyst-remote-linkprobe: unknown mode %u\n", H.Mode);
      return;
    }
    if (!Ok) {
      std::fprintf(stderr, "catalyst-remote-linkprobe: connection lost: %s\n",
                   errno ? std::strerror(errno) : "end of stream");
      return;
    }
  }
}

int runServer(const std::string &Bind, uint64_t Connections, unsigned TimeoutS) {
  SocketAddress A;
  std::string Error;
  if (!parseAddress(Bind, A, Error))
    fail(Error);
  int L = listenOn(A, 0, Error);
  if (L < 0)
    fail(Error);
  std::printf("catalyst-remote-linkprobe: listening on %s\n",
              formatAddress(localAddress(L)).c_str());
  std::fflush(stdout);
  for (uint64_t Served = 0; Connections == 0 || Served < Connections; ++Served) {
    pollfd P{L, POLLIN, 0};
    int Rc = ::poll(&P, 1, int(TimeoutS) * 1000);
    if (Rc == 0) {
      std::fprintf(stderr, "catalyst-remote-linkprobe: no connection for %us, exiting\n", TimeoutS);
      return 0;
    }
    if (Rc < 0 && errno == EINTR)
      return 0;
    int Fd = ::accept4(L, nullptr, nullptr, SOCK_CLOEXEC);
    if (Fd < 0)
      fail(errnoText("accept"));
    setNoDelay(Fd);
    setTimeouts(Fd, TimeoutS);
    serveConnection(Fd);
    ::close(Fd);
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Client
//===----------------------------------------------------------------------===//

int connectTo(const std::string &Spec) {
  SocketAddress A;
  std::string Error;
  if (!parseAddress(Spec, A, Error))
    fail(Error);
  int Fd = ::socket(A.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    fail(errnoText("socket"));
  if (::connect(Fd, A.get(), A.Length) != 0)
    fail("cannot connect to " + Spec + ": " + std::strerror(errno));
  setNoDelay(Fd);
  return Fd;
}

void sendHeader(int Fd, Mode M, uint64_t Size, uint64_t Count, uint32_t Flags) {
  Header H{Magic, M, Size, Count, Flags, 0};
  if (!writeAll(Fd, &H, sizeof(H)))
    fail(errnoText("send"));
}

double quantile(std::vector<double> V, double Q) {
  std::sort(V.begin(), V.end());
  double Pos = Q * double(V.size() - 1);
  size_t I = size_t(Pos);
  double Frac = Pos - double(I);
  return I + 1 < V.size() ? V[I] * (1 - Frac) + V[I + 1] * Frac : V[I];
}

int runPingPong(int Fd, uint64_t Size, uint64_t Count, uint64_t Warmup) {
  std::vector<char> Out(std::max<uint64_t>(Size, 1)), In(Out.size());
  std::vector<double> Us;
  Us.reserve(Count);
  sendHeader(Fd, PingPong, Size, Warmup + Count, 0);
  for (uint64_t I = 0; I < Warmup + Count; ++I) {
    std::memset(Out.data(), int(I & 0xff), Out.size());
    int64_t Start = nowNs();
    if (!writeAll(Fd, Out.data(), Size) || !readAll(Fd, In.data(), Size))
      fail(std::string("round trip failed: ") + (errno ? std::strerror(errno) : "end of stream"));
    int64_t End = nowNs();
    if (std::memcmp(Out.data(), In.data(), Size) != 0)
      fail("the echo differs from what was sent");
    if (I >= Warmup)
      Us.push_back(double(End - Start) / 1e3);
  }
  std::printf("pingpong size=%llu count=%llu rtt_us_median=%.1f rtt_us_p10=%.1f "
              "rtt_us_p90=%.1f rtt_us_min=%.1f\n",
              (unsigned long long)Size, (unsigned long long)Count, quantile(Us, 0.5),
              quantile(Us, 0.1), quantile(Us, 0.9), quantile(Us, 0));
  return 0;
}

int runStream(int Fd, uint64_t Bytes, uint64_t Count, bool Reverse, bool Verify) {
  std::unique_ptr<char[]> Buf(new char[StreamBuffer]), Expected(new char[StreamBuffer]);
  std::vector<double> MiBs;
  sendHeader(Fd, Reverse ? StreamDown : StreamUp, Bytes, Count, Verify ? FlagVerify : 0);
  for (uint64_t I = 0; I < Count; ++I) {
    int64_t Start = nowNs();
    bool Ok;
    if (Reverse) {
      Ok = writeAll(Fd, "g", 1) && receiveStream(Fd, Bytes, Verify, Buf.get(), Expected.get());
    } else {
      char Ack;
      Ok = sendStream(Fd, Bytes, Verify, Buf.get()) && readAll(Fd, &Ack, 1);
    }
    if (!Ok)
      fail(std::string("stream failed: ") + (errno ? std::strerror(errno) : "end of stream"));
    double Seconds = double(nowNs() - Start) / 1e9;
    MiBs.push_back(double(Bytes) / double(1 << 20) / Seconds);
  }
  double Median = quantile(MiBs, 0.5);
  std::printf("stream bytes=%llu count=%llu direction=%s verified=%s mib_s_median=%.1f "
              "mib_s_min=%.1f mib_s_max=%.1f gbit_s_median=%.3f\n",
              (unsigned long long)Bytes, (unsigned long long)Count, Reverse ? "down" : "up",
              Verify ? "yes" : "no", Median, quantile(MiBs, 0), quantile(MiBs, 1),
              Median * double(1 << 20) * 8 / 1e9);
  return 0;
}

[[noreturn]] void usageError(const std::string &Why) {
  std::fprintf(stderr, "catalyst-remote-linkprobe: %s\n%s", Why.c_str(), Usage);
  std::exit(2);
}

} // namespace

int main(int Argc, char **Argv) {
  std::vector<std::string> Positional;
  std::string Bind, Connect;
  uint64_t Count = 3, Warmup = 10, Connections = 0, TimeoutS = 300;
  bool Reverse = false, Verify = false;
  for (int I = 1; I < Argc; ++I) {
    std::string Flag = Argv[I];
    bool HasValue = I + 1 < Argc;
    if (Flag == "--help" || Flag == "-h") {
      std::fputs(Usage, stdout);
      return 0;
    }
    if (Flag == "--reverse") {
      Reverse = true;
    } else if (Flag == "--verify") {
      Verify = true;
    } else if (Flag == "--bind" && HasValue) {
      Bind = Argv[++I];
    } else if (Flag == "--connect" && HasValue) {
      Connect = Argv[++I];
    } else if (Flag == "--count" && HasValue) {
      if (!parseSize(Argv[++I], Count) || Count == 0)
        usageError("bad --count");
    } else if (Flag == "--warmup" && HasValue) {
      if (!parseSize(Argv[++I], Warmup))
        usageError("bad --warmup");
    } else if (Flag == "--connections" && HasValue) {
      if (!parseSize(Argv[++I], Connections))
        usageError("bad --connections");
    } else if (Flag == "--timeout-s" && HasValue) {
      if (!parseSize(Argv[++I], TimeoutS) || TimeoutS == 0 || TimeoutS > 86400)
        usageError("bad --timeout-s");
    } else if (Flag.size() > 1 && Flag[0] == '-') {
      usageError("bad argument '" + Flag + "'");
    } else {
      Positional.push_back(Flag);
    }
  }
  if (Positional.empty())
    usageError("no mode given");
  // Cannot fail: SIGPIPE may be ignored (and SIGALRM caught, below).
  std::signal(SIGPIPE, SIG_IGN);
  const std::string &M = Positional[0];
  if (M == "server") {
    if (Bind.empty() || Positional.size() != 1)
      usageError("server takes --bind HOST:PORT");
    return runServer(Bind, Connections, unsigned(TimeoutS));
  }
  if (Connect.empty())
    usageError(M + " needs --connect HOST:PORT");
  // The client is bounded as a whole: a path that stalls ends it.
  std::signal(SIGALRM, onAlarm);
  ::alarm(unsigned(TimeoutS));
  uint64_t Size = 0, N = 0;
  if (M == "pingpong") {
    if (Positional.size() != 3 || !parseSize(Positional[1], Size) || Size == 0 ||
        !parseSize(Positional[2], N) || N == 0)
      usageError("pingpong takes SIZE COUNT");
    int Fd = connectTo(Connect);
    int Rc = runPingPong(Fd, Size, N, Warmup);
    ::close(Fd);
    return Rc;
  }
  if (M == "stream") {
    if (Positional.size() != 2 || !parseSize(Positional[1], Size) || Size == 0)
      usageError("stream takes BYTES");
    int Fd = connectTo(Connect);
    int Rc = runStream(Fd, Size, Count, Reverse, Verify);
    ::close(Fd);
    return Rc;
  }
  usageError("unknown mode '" + M + "'");
}
