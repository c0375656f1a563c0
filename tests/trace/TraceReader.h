//===- TraceReader.h - Reading a trace file back in tests -------*- C++ -*-===//
//
// Parses a trace with LLVM's JSON parser (so a file that is not JSON fails
// the test) and checks every event's shape: complete events ("X") with a
// name, category, integer pid and tid, and a start and duration in
// microseconds; metadata events ("M") naming processes and threads.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_TRACEREADER_H
#define CATALYST_REMOTE_TESTS_TRACEREADER_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace catalyst::remote::test {

struct TraceSpan {
  std::string Name, Category;
  int64_t Pid, Tid;
  double Start, Duration; // microseconds
  llvm::json::Object Args;

  double end() const { return Start + Duration; }
  // Args[Key] as an integer, or -1.
  int64_t intArg(llvm::StringRef Key) const;
  std::string textArg(llvm::StringRef Key) const;
};

struct Trace {
  std::vector<TraceSpan> Spans;
  std::map<int64_t, std::string> Processes;
  std::map<std::pair<int64_t, int64_t>, std::string> Threads;

  // Spans whose name starts with Prefix, in the file's order.
  std::vector<const TraceSpan *> named(llvm::StringRef Prefix) const;
  // Spans on Pid, Tid from From to To (microseconds), give or take Slack.
  std::vector<const TraceSpan *> within(int64_t Pid, int64_t Tid, double From, double To,
                                        double Slack) const;
};

// The trace at Path, or an error saying what is wrong with it.
llvm::Expected<Trace> readTrace(const std::string &Path);

} // namespace catalyst::remote::test

#endif
