//===- TraceEvents.h - Chrome trace events as JSON text ---------*- C++ -*-===//
//
// Builds the text of trace events (the Trace Event Format that Perfetto and
// chrome://tracing open): complete events ("X", a span with its start and
// duration) and metadata events ("M") naming processes and threads. Times
// are given in nanoseconds of the host's steady clock and written in the
// format's microseconds, to the nanosecond. Text may come from the executor
// (an error message): whatever its bytes, it is written as a valid JSON
// string. Written by hand rather than through llvm::json::OStream, which
// cost a traced launch more (trace/launch/8B/<strategy>, TraceBench.cpp,
// measures what a trace adds to a launch).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRACE_TRACEEVENTS_H
#define CATALYST_REMOTE_TRACE_TRACEEVENTS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace catalyst::remote {

// Where an event is drawn: a process and one of its threads.
struct TraceTrack {
  uint64_t Pid, Tid;
};

// An event's arguments ("args"). Keys are the caller's literals: plain
// ASCII, nothing to escape.
class TraceArgs {
public:
  explicit TraceArgs(std::string &Out) : Out(Out) {}
  void add(llvm::StringRef Key, uint64_t Value);
  void add(llvm::StringRef Key, int64_t Value);
  void add(llvm::StringRef Key, bool Value);
  void add(llvm::StringRef Key, llvm::StringRef Text);
  void add(llvm::StringRef Key, const char *Text) { add(Key, llvm::StringRef(Text)); }

private:
  void key(llvm::StringRef Key);
  std::string &Out;
  bool First = true;
};

class TraceEvents {
public:
  using ArgWriter = llvm::function_ref<void(TraceArgs &)>;

  TraceEvents() { Text.reserve(2048); }

  void span(llvm::StringRef Name, llvm::StringRef Category, TraceTrack Where, uint64_t StartNs,
            uint64_t DurationNs, ArgWriter Args = nullptr);
  void processName(uint64_t Pid, llvm::StringRef Name);
  void threadName(TraceTrack Where, llvm::StringRef Name);

  // The events so far, separated by commas (TraceFile::append's input).
  llvm::StringRef text() const { return Text; }

private:
  void begin(llvm::StringRef Name, llvm::StringRef Phase, TraceTrack Where);
  void metadata(llvm::StringRef Kind, TraceTrack Where, llvm::StringRef Name);

  std::string Text;
};

// Appends S to Out as a JSON string: quoted, escaped, invalid UTF-8
// replaced.
void appendJsonString(std::string &Out, llvm::StringRef S);

} // namespace catalyst::remote

#endif
