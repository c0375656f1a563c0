//===- FakeExecutor.h - A peer that plays the executor ----------*- C++ -*-===//
//
// A listener on a kernel-chosen loopback port whose one connection is
// served by a test's own code on a thread of its own: an impostor, a
// staller, a peer that says what no executor would. The thread is joined
// when the object goes away.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_FAKEEXECUTOR_H
#define CATALYST_REMOTE_TESTS_FAKEEXECUTOR_H

#include <functional>
#include <string>
#include <thread>

namespace catalyst::remote::test {

class FakeExecutor {
public:
  // Play serves the one connection; the socket is closed after it returns.
  explicit FakeExecutor(std::function<void(int Fd)> Play);
  ~FakeExecutor();
  FakeExecutor(const FakeExecutor &) = delete;
  FakeExecutor &operator=(const FakeExecutor &) = delete;

  std::string Address; // "127.0.0.1:port"

private:
  int Listen;
  std::thread Server;
};

// True when the peer closes Fd within five seconds, after whatever it sent.
bool closedByPeer(int Fd);

} // namespace catalyst::remote::test

#endif
