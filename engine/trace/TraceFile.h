//===- TraceFile.h - A Chrome trace-event file shared by sessions -*- C++ -*-===//
//
// The sessions of a process that trace to one path share one TraceFile: the
// first truncates the file, later ones (in the same process) add to it, and
// it stays open until the process exits. Every append leaves a complete JSON
// document behind: the events go where the closing brackets were, and the
// brackets after them, in one write. So the file can be read at any moment
// and is valid whenever the process stops between two appends: after a
// failed launch, without any session being closed, at exit, even when the
// process is killed (unless it dies inside that write).
//
// Threads: append() and firstSight() on any thread (every session's
// calls that trace to the file), under M; get() under the registry's own
// mutex.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRACE_TRACEFILE_H
#define CATALYST_REMOTE_TRACE_TRACEFILE_H

#include "sync/Mutex.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>

namespace catalyst::remote {

class TraceFile {
public:
  // The process's file for Path ("%p" in it stands for this process's id),
  // created (or truncated) on first use.
  static llvm::Expected<std::shared_ptr<TraceFile>> get(llvm::StringRef Path);
  ~TraceFile();
  TraceFile(const TraceFile &) = delete;
  TraceFile &operator=(const TraceFile &) = delete;

  // Appends Events: JSON objects separated by commas. Safe from any thread.
  // A write that fails ends the file's tracing, said once on stderr: a full
  // disk must not fail launches.
  void append(llvm::StringRef Events);

  // True the first time Pid and Tid are asked about: the caller names them.
  bool firstSight(uint64_t Pid, uint64_t Tid);

  const std::string &path() const { return Path; }

private:
  TraceFile(std::string Path, int Fd) : Path(std::move(Path)), Fd(Fd) {}
  bool writeAt(uint64_t Offset, llvm::StringRef Bytes);

  const std::string Path;
  const int Fd;
  sync::Mutex M;
  uint64_t End GUARDED_BY(M) = 0;    // where the closing brackets start
  bool Empty GUARDED_BY(M) = true;   // no event yet
  bool Broken GUARDED_BY(M) = false; // a write failed
  std::string Batch GUARDED_BY(M);   // reused for each write
  std::set<std::pair<uint64_t, uint64_t>> Seen GUARDED_BY(M);
};

} // namespace catalyst::remote

#endif
