//===- Target.h - What a C ABI handle names ---------------------*- C++ -*-===//
//
// A handle names one executor's Session, or a Pool of executors when it
// was opened with a "pool:" address. The C ABI's calls mean the same on
// either; Pool.h says how a pool places them.
//
// Thread safety: as Session and Pool, every method from any thread.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CAPI_TARGET_H
#define CATALYST_REMOTE_CAPI_TARGET_H

#include "catalyst/remote/Pool.h"
#include "catalyst/remote/Session.h"

#include <memory>
#include <vector>

namespace catalyst::remote::capi {

// A target's counters as the C ABI reports them.
struct TargetStats {
  uint64_t Launches = 0;
  LaunchStats Last, Total;
  const char *Strategy = "none"; // a pool's members' own, or "mixed"
  const char *Transport = "none";
};

class Target {
public:
  // Opens a pool for "pool:..." addresses (options from
  // poolOptionsFromEnvironment), else a session (optionsFromEnvironment);
  // both with Outputs.
  static llvm::Expected<std::shared_ptr<Target>> open(llvm::StringRef Address,
                                                      const OutputAllocator &Outputs);
  // Opens with Opts: the whole of it for a pool, Opts.Member for a session.
  static llvm::Expected<std::shared_ptr<Target>> open(llvm::StringRef Address,
                                                      const PoolOptions &Opts);

  llvm::StringRef address() const;
  bool connected() const;
  llvm::Error sendBinary(llvm::StringRef Path, BinaryFormat Format);
  llvm::Expected<std::vector<char>> callWrapper(llvm::StringRef Symbol, llvm::ArrayRef<char> Args);
  llvm::Error launch(const LaunchCall &Call);
  uint64_t launchAsync(const LaunchCall &Call);
  llvm::Error await(uint64_t Ticket);
  // Session::upload, fetch and release; a pool refuses them for now.
  llvm::Expected<Resident> upload(const MemrefArg &In);
  llvm::Error fetch(const Resident &R, const MemrefArg &Out, llvm::MutableArrayRef<char> Into);
  llvm::Error release(Resident &R);
  TargetStats stats() const;
  // A JSON object: kind ("session" or "pool"), address, connected, and
  // stats; a session's strategy, transport, protection and executor too.
  std::string describe() const;
  // Session::startTrace / stopTrace, or Pool's on every member.
  llvm::Error startTrace(llvm::StringRef Path);
  llvm::Error stopTrace();
  llvm::Error close();

private:
  // Exactly one is set.
  std::unique_ptr<Session> One;
  std::unique_ptr<Pool> Many;
};

} // namespace catalyst::remote::capi

#endif
