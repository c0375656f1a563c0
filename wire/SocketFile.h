//===- SocketFile.h - Unix sockets named in the file system -----*- C++ -*-===//
//
// An executor may listen, and a host connect, at "unix:PATH": a Unix socket
// file. Its privacy comes from the file system, not from a network:
//
//   - The executor creates it with mode 0600 (umask 0177 around bind();
//     listen() follows, so nobody connects before the mode is right), in a
//     directory owned by its user (or root) that group and others cannot
//     write to, so that nobody else can put a socket of their own at PATH.
//   - It replaces a socket file at PATH that nothing listens on (left by an
//     executor that was killed), never anything else, and removes its own
//     file when it stops.
//   - Each end serves or talks only to processes of its own user
//     (SO_PEERCRED): root, which the mode does not stop, included.
//
// Such a connection may be relayed from another machine (ssh -L to the
// socket), so neither end takes it for a local one: shared memory goes
// through the executor's offer, as over TCP (LocalOffer.h).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_SOCKETFILE_H
#define CATALYST_REMOTE_WIRE_SOCKETFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>

namespace catalyst::remote::wire {

inline constexpr llvm::StringLiteral UnixScheme = "unix:";

// PATH, when Address is "unix:PATH".
std::optional<llvm::StringRef> socketFilePath(llvm::StringRef Address);

// A socket file an executor made, which only it removes.
struct SocketFile {
  std::string Path; // absolute
  dev_t Device = 0;
  ino_t Inode = 0;
};

// Listens at Path (made absolute), as the header says: a non-blocking,
// close-on-exec socket; File receives what to remove later. Errors name
// Path and what is wrong with it.
llvm::Expected<int> listenAtPath(llvm::StringRef Path, SocketFile &File);

// Removes File, unless Path names another file by now (another executor's,
// which replaced it once this one stopped listening).
void removeSocketFile(const SocketFile &File);

// Connects to the socket file Path by the deadline and checks that the
// process listening there runs as this process's user. Returns a blocking
// socket.
llvm::Expected<int> connectToPath(llvm::StringRef Path, std::chrono::steady_clock::time_point By);

// Whether the connected socket Fd is one of a socket file (not TCP, not an
// abstract socket).
bool isSocketFile(int Fd);

// Fails, saying so, when the process at the other end of the Unix socket
// Fd runs as another user than this process.
llvm::Error checkPeerUser(int Fd);

} // namespace catalyst::remote::wire

#endif
