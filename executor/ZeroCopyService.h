//===- ZeroCopyService.h - Launches in one out-of-line round trip -*- C++ -*-===//
//
// Receives a launch plan and its inputs' payload straight into the session's
// slabs (every destination checked first), runs the entry, and answers with
// the output payload sent straight from the kernel's buffers, which it then
// frees. A bad request gets an error reply and the session goes on.
//
// The entry runs on the connection's reader thread: handing it to another
// thread would cost a wake-up per launch, a good part of a loopback round
// trip. Other requests of the session wait while a kernel runs; the host
// runs one launch per session at a time anyway.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_ZEROCOPYSERVICE_H
#define CATALYST_REMOTE_EXECUTOR_ZEROCOPYSERVICE_H

#include "../engine/wire/Protocol.h"
#include "../engine/wire/SocketTransport.h"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>

namespace catalyst::remote::executor {

class ZeroCopyService final : public wire::PayloadHandler {
public:
  static ZeroCopyService &get(); // one per connection process

  void attach(wire::SocketTransport &T);
  void enable() { Enabled = true; }

  llvm::Expected<std::vector<iovec>> place(wire::PayloadOpcode OpC, uint64_t SeqNo,
                                           llvm::ArrayRef<char> Plan,
                                           uint64_t PayloadBytes) override;
  void finish(wire::PayloadOpcode OpC, uint64_t SeqNo,
              llvm::orc::shared::WrapperFunctionBuffer Plan, llvm::Error Err) override;
  void disconnected() override {}

private:
  using Clock = std::chrono::steady_clock;
  struct Launch {
    llvm::orc::ExecutorAddr Entry;
    std::vector<wire::ZeroCopyInput> Inputs;
    std::vector<wire::LaunchOutputSpec> Outputs;
    Clock::time_point Arrived;
    uint64_t CopyInNs = 0;
  };

  ZeroCopyService() = default;
  llvm::Expected<Launch> decode(llvm::ArrayRef<char> Plan, uint64_t PayloadBytes);
  void run(uint64_t SeqNo, Launch &L);
  void replyError(uint64_t SeqNo, llvm::Error Err);

  wire::SocketTransport *Transport = nullptr;
  std::atomic<bool> Enabled{false};
  std::mutex M;
  std::map<uint64_t, Launch> Arriving;
};

} // namespace catalyst::remote::executor

#endif
