//===- Startups.h - Peers that have not authenticated yet -------*- C++ -*-===//
//
// A peer that has proven nothing must not take a real host's place. The
// listener counts such peers (startups) apart from sessions, and admits a
// new one only within two budgets, in the manner of OpenSSH's MaxStartups
// and PerSourceMaxStartups:
//
// - overall, start:rate:full: below Start startups every new peer is
//   admitted; from Start on a new one is dropped with probability Rate%,
//   rising linearly to 100% at Full;
// - per source address: at most PerSource startups from one address.
//
// A host dropped here is told the executor is busy and tries again within
// its handshake timeout (retryWhileBusy, engine/session/OpenChannel.cpp), so a host that
// authenticates quickly gets in while slow or silent peers pile up; --max-connections then counts
// sessions only. Not thread-safe: the listener's thread owns it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_STARTUPS_H
#define CATALYST_REMOTE_EXECUTOR_STARTUPS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <random>
#include <string>

namespace catalyst::remote::executor {

struct StartupLimits {
  unsigned Start = 100, RatePercent = 30, Full = 1000;
  unsigned PerSource = 20;

  // Parses "START:RATE:FULL" or "FULL" (then start = full, no early drop)
  // into L, as OpenSSH's MaxStartups.
  static llvm::Error parse(llvm::StringRef Text, StartupLimits &L);
  // With a token a startup costs a socket and a few hundred bytes in the
  // listener; without one the executor forks for it before it has spoken,
  // so the budget counts processes and is OpenSSH's own.
  static StartupLimits defaultsFor(bool Token);
};

class Startups {
public:
  enum class Verdict { Admit, EarlyDrop, Full, SourceFull };

  explicit Startups(const StartupLimits &L, uint64_t Seed = std::random_device()());

  // Whether a new peer from Source may start; when it may, it is counted
  // until done() is called for it.
  Verdict admit(const std::string &Source);
  void done(const std::string &Source);

  unsigned count() const { return Total; }
  const StartupLimits &limits() const { return Limits; }

private:
  StartupLimits Limits;
  std::mt19937_64 Random;
  unsigned Total = 0;
  std::map<std::string, unsigned> PerSource;
};

// What a busy executor tells a peer it drops (wire::BusyRefusal and the
// budget that dropped it): hosts recognize it and try again.
std::string busyReason(Startups::Verdict V);

} // namespace catalyst::remote::executor

#endif
