//===- UnixSocket.h - Abstract Unix sockets on one machine ------*- C++ -*-===//
//
// The local socket an executor offers hosts on its own machine
// (LocalOffer.h). Abstract names live in the network namespace, not in the
// file system: nothing to clean up after a crash, and a host in another
// namespace (a container, a network lab) does not reach it and stays on TCP.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_UNIXSOCKET_H
#define CATALYST_REMOTE_WIRE_UNIXSOCKET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

namespace catalyst::remote::wire {

// A listening abstract socket of a fresh random name (non-blocking,
// close-on-exec); Name receives it, without the leading NUL.
llvm::Expected<int> listenLocal(std::string &Name);

// Connects to the abstract socket Name by the deadline and checks that the
// process listening on it is Pid, running as the user /proc/Pid belongs to.
// Returns a blocking socket.
llvm::Expected<int> connectLocal(llvm::StringRef Name, uint32_t Pid,
                                 std::chrono::steady_clock::time_point By);

// Connects the Unix socket Fd to A (Len bytes of it) by the deadline: a
// Unix connect completes at once, or waits for room in a full backlog.
// Returns 0 or an errno value (ETIMEDOUT once the deadline passed).
int connectUnixBy(int Fd, const sockaddr_un &A, socklen_t Len,
                  std::chrono::steady_clock::time_point By);

// How long both ends of a session over the local socket look for the next
// message before they sleep (TransportOptions::Spin): 100 us, a little more
// than waking the other CPU costs on the VM it was chosen on, so that a
// message that comes soon is caught without the wake-up (launch/local/8B in
// benchmarks/TransferBench.cpp, with CATALYST_REMOTE_SPIN_US set to other
// values, measures it); an idle session pays it
// once per message, in CPU time. CATALYST_REMOTE_SPIN_US overrides it (0:
// never spin), for measuring.
std::chrono::microseconds localSpin();

// Whether Fd is a Unix-domain socket (else TCP, for this project).
bool isUnixSocket(int Fd);

// The process at the other end of the connected Unix socket Fd, as the
// kernel recorded it when the connection was made; pid 0 when unknown.
struct PeerProcess {
  pid_t Pid = 0;
  uid_t Uid = 0;
};
PeerProcess peerOf(int Fd);

} // namespace catalyst::remote::wire

#endif
