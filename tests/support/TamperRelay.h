//===- TamperRelay.h - A man in the middle for one TCP connection -*- C++ -*-===//
//
// What an attacker on the path does: accepts one connection on a loopback
// port, connects to the target, and passes bytes both ways unchanged until
// told to tamper: then it flips a bit in the next bytes going one way, or
// slips its own bytes in before them. The handshake passes untouched, so
// the session opens; what follows must not be the attacker's.
//
// Thread-safety: construct, tamper() and destroy on one thread; the relay
// runs a thread per direction.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_TAMPERRELAY_H
#define CATALYST_REMOTE_TESTS_TAMPERRELAY_H

#include "Sockets.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace catalyst::remote::test {

class TamperRelay {
public:
  enum class Direction { ToExecutor, ToHost };

  // Relays the first connection to its port to Target ("127.0.0.1:PORT").
  explicit TamperRelay(std::string Target);
  ~TamperRelay();
  TamperRelay(const TamperRelay &) = delete;
  TamperRelay &operator=(const TamperRelay &) = delete;

  std::string address() const { return Listener.address(); }

  // From now on, the next bytes going Way have one bit flipped.
  void flipNext(Direction Way);
  // From now on, Bytes go Way before the next bytes the relay passes on.
  void injectNext(Direction Way, std::vector<char> Bytes);
  // From now on, the byte At of the next bytes going Way becomes Value.
  void overwriteNext(Direction Way, size_t At, char Value);
  // Whether the tampering asked for has been done.
  bool tampered() const { return Done.load(); }

private:
  void run();
  void pump(int From, int To, Direction Way);

  LoopbackSocket Listener{true};
  std::string Target;
  // What to do to the next bytes going Armed's way (under Mutex).
  std::mutex Mutex;
  bool Armed = false;
  Direction Way = Direction::ToHost;
  std::vector<char> Injected; // empty: flip a bit, or overwrite one
  size_t OverwriteAt = SIZE_MAX;
  char OverwriteWith = 0;
  std::atomic<bool> Done{false};
  std::atomic<bool> Stopping{false};
  int Fds[2] = {-1, -1}; // accepted, target (set by the relay thread)
  std::thread Thread;    // last: it uses everything above
};

} // namespace catalyst::remote::test

#endif
