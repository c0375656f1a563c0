//===- Report.h - What a command found, as text or JSON ---------*- C++ -*-===//
//
// Text for people (one fact per line), or with --json one JSON object on
// stdout for scripts. JSON has whole numbers: times in nanoseconds, rates in
// bytes a second; text has the most readable unit.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CLI_REPORT_H
#define CATALYST_REMOTE_CLI_REPORT_H

#include "DType.h"
#include "TimeSummary.h"
#include "catalyst/remote/ExecutorInfo.h"
#include "catalyst/remote/Stats.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace catalyst::remote::cli {

struct PingReport {
  std::string Address;
  ExecutorInfo Executor;
  Strategy Chosen = Strategy::Naive; // what launches would use
  std::string Protection;            // Session::protection()
  std::string Transport;             // "tcp", "unix" or "local"
  double ConnectNs = 0;              // connecting, authenticating, the EPC handshake
  TimeSummary RoundTrip;
};

// ping of a pool address: each healthy member as ping shows one executor,
// ConnectNs for the whole pool's opening.
struct PoolPingReport {
  std::string Address;
  double ConnectNs = 0;
  std::vector<std::pair<std::string, PingReport>> Members; // name, member
  std::vector<std::string> Failures;                       // "name: why"
};

struct OutputFile {
  std::string Path;
  DType Type;
  std::vector<int64_t> Shape;
  uint64_t Bytes = 0;
};

struct RunReport {
  std::vector<OutputFile> Outputs;
  Strategy Chosen = Strategy::Naive;
  TimeSummary Launch;
  uint64_t PayloadBytes = 0; // one launch's inputs and outputs
  LaunchStats Last;          // the engine's counters for the last launch
};

void printPing(const PingReport &R, bool Json, llvm::raw_ostream &OS);
void printPoolPing(const PoolPingReport &R, bool Json, llvm::raw_ostream &OS);
void printRun(const RunReport &R, bool Json, llvm::raw_ostream &OS);

} // namespace catalyst::remote::cli

#endif
