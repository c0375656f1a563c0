//===- DirectKernel.cpp - The scale kernel called in a process of ours ----===//

#include "DirectKernel.h"

#include "BenchEnv.h"
#include "NetUtil.h"

#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mimalloc.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

// kernels/scale.c, the object the executor links too.
extern "C" void scale(void *Rv, void *Av);

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

// Filling a 256 MiB input and reserving the arena take well under a second.
constexpr auto StartTimeout = std::chrono::seconds(30);
// One 256 MiB call takes about 0.1 s warm, a few times that cold and loaded.
constexpr int CallTimeoutSeconds = 60;

// What the child answers per call; both sides are this binary.
struct Reply {
  uint64_t Ns;
  uint64_t Faults;
};

Error childError(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "local kernel process: " + What);
}

//===-- The child's side ----------------------------------------------------===//

uint64_t minorFaults() {
  rusage U{};
  ::getrusage(RUSAGE_SELF, &U);
  return uint64_t(U.ru_minflt);
}

// Timed as the executor times a kernel: the entry alone, its output's
// malloc included. False when the output is wrong.
bool callOnce(MemrefR1 &In, Reply &R) {
  MemrefR1 Out{};
  MemrefR1 *Args[] = {&In};
  uint64_t Faults = minorFaults();
  auto Start = Clock::now();
  scale(&Out, Args);
  double Seconds = secondsSince(Start);
  R = {uint64_t(Seconds * 1e9), minorFaults() - Faults};
  const double *Src = static_cast<const double *>(In.Aligned);
  const double *Got = static_cast<const double *>(Out.Aligned);
  int64_t N = In.Sizes[0];
  bool Ok = Got && Out.Sizes[0] == N && Got[0] == 2 * Src[0] && Got[N / 2] == 2 * Src[N / 2] &&
            Got[N - 1] == 2 * Src[N - 1];
  std::free(Out.Allocated);
  return Ok;
}

// The arena the kernel's outputs come from, room for one with slack for
// mimalloc's alignment: the input is allocated before it, from the system.
bool reserveArena(uint64_t Bytes) {
  if (int Err = mi_reserve_os_memory(Bytes + 64 * MiB, /*commit=*/true, /*allow_large=*/false)) {
    errs() << "catalyst-remote-bench (local kernel): cannot reserve " << ((Bytes >> 20) + 64)
           << " MiB: " << std::strerror(Err) << "\n";
    return false;
  }
  return true;
}

// Listens on loopback, says where, and takes the one connection.
int acceptParent() {
  tools::SocketAddress Addr;
  std::string Why;
  int Listener = -1;
  if (tools::parseAddress("127.0.0.1:0", Addr, Why))
    Listener = tools::listenOn(Addr, 0, Why);
  if (Listener < 0) {
    errs() << "catalyst-remote-bench (local kernel): " << Why << "\n";
    return -1;
  }
  outs() << "catalyst-remote-bench: local kernel listening on "
         << tools::formatAddress(tools::localAddress(Listener)) << "\n";
  outs().flush();
  int Fd = ::accept4(Listener, nullptr, nullptr, SOCK_CLOEXEC);
  ::close(Listener);
  return Fd;
}

// One call per byte received, until the parent hangs up.
int serve(int Fd, MemrefR1 &In) {
  char Go;
  while (tools::readAll(Fd, &Go, 1)) {
    Reply R;
    if (!callOnce(In, R)) {
      errs() << "catalyst-remote-bench (local kernel): scale returned wrong values\n";
      return 1;
    }
    if (!tools::writeAll(Fd, &R, sizeof(R)))
      return 1;
  }
  return errno == 0 ? 0 : 1;
}

} // namespace

int runDirectKernelChild(int Argc, char **Argv) {
  uint64_t Bytes = Argc == 3 ? std::strtoull(Argv[2], nullptr, 10) : 0;
  if (Bytes == 0 || Bytes % sizeof(double) != 0) {
    errs() << "usage: catalyst-remote-bench " << DirectKernelChildFlag
           << " BYTES (a positive multiple of 8)\n";
    return 2;
  }
  std::vector<double> Input(Bytes / sizeof(double));
  for (size_t I = 0; I < Input.size(); ++I)
    Input[I] = double(I);
  if (!reserveArena(Bytes))
    return 1;
  MemrefR1 In{Input.data(), Input.data(), 0, {int64_t(Input.size())}, {1}};
  int Fd = acceptParent();
  if (Fd < 0)
    return 1;
  int Status = serve(Fd, In);
  ::close(Fd);
  return Status;
}

//===-- The benchmark's side ------------------------------------------------===//

Expected<std::unique_ptr<DirectKernel>> DirectKernel::start(const CpuPlan &Pins, uint64_t Bytes) {
  tools::ChildSpec Spec{{"/proc/self/exe", DirectKernelChildFlag, std::to_string(Bytes)}};
  Spec.Cpu = Pins.How == CpuPlan::None ? -1 : Pins.Peers;
  Spec.Timeout = StartTimeout;
  std::string Why;
  auto Child = tools::ListeningChild::start(Spec, Why);
  if (!Child)
    return childError(Why);
  tools::SocketAddress Addr;
  if (!tools::parseAddress(Child->address(), Addr, Why))
    return childError(Why);
  int Fd = ::socket(Addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return childError(tools::errnoText("socket"));
  std::unique_ptr<DirectKernel> K(new DirectKernel(std::move(Child), Fd));
  timeval Bound{CallTimeoutSeconds, 0};
  if (::setsockopt(Fd, SOL_SOCKET, SO_RCVTIMEO, &Bound, sizeof(Bound)) != 0 ||
      ::connect(Fd, Addr.get(), Addr.Length) != 0)
    return childError(tools::errnoText(("connect to " + K->Child->address()).c_str()));
  return K;
}

DirectKernel::~DirectKernel() {
  ::close(Fd);
}

Expected<DirectKernel::Call> DirectKernel::call() {
  char Go = 'k';
  if (!tools::writeAll(Fd, &Go, 1))
    return childError(tools::errnoText("send"));
  Reply R;
  if (!tools::readAll(Fd, &R, sizeof(R))) {
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return childError("no answer within " + Twine(CallTimeoutSeconds) + " s");
    return childError(errno ? tools::errnoText("receive")
                            : std::string("ended before answering (its stderr says why)"));
  }
  return Call{double(R.Ns) / 1e9, R.Faults};
}

} // namespace catalyst::remote::bench
