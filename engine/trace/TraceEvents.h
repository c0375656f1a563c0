//===- TraceEvents.h - Chrome trace events as JSON text ---------*- C++ -*-===//
//
// Builds the text of trace events (the Trace Event Format that Perfetto and
// chrome://tracing open): complete events ("X", a span with its start and
// duration) and metadata events ("M") naming processes and threads. Times
// are given in nanoseconds of the host's steady clock and written in the
// format's microseconds, to the nanosecond. Strings may come from the
// executor: whatever their bytes, they are written as valid JSON strings.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRACE_TRACEEVENTS_H
#define CATALYST_REMOTE_TRACE_TRACEEVENTS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>

namespace catalyst::remote {

// Where an event is drawn: a process and one of its threads.
struct TraceTrack {
  uint64_t Pid, Tid;
};

class TraceEvents {
public:
  // Writes an event's arguments ("args") as attributes.
  using ArgWriter = llvm::function_ref<void(llvm::json::OStream &)>;

  void span(llvm::StringRef Name, llvm::StringRef Category, TraceTrack Where, uint64_t StartNs,
            uint64_t DurationNs, ArgWriter Args = nullptr);
  void processName(uint64_t Pid, llvm::StringRef Name);
  void threadName(TraceTrack Where, llvm::StringRef Name);

  // The events so far, separated by commas (TraceFile::append's input).
  llvm::StringRef text() const { return Text; }

private:
  void metadata(llvm::StringRef Kind, TraceTrack Where, llvm::StringRef Name);
  llvm::raw_ostream &next();

  std::string Text;
  llvm::raw_string_ostream OS{Text};
};

// S as a JSON string value, invalid UTF-8 replaced.
llvm::json::Value jsonText(llvm::StringRef S);

} // namespace catalyst::remote

#endif
