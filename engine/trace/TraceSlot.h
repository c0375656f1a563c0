//===- TraceSlot.h - The trace a session writes to, now ---------*- C++ -*-===//
//
// A session's trace may start and stop while other threads make calls on
// it. A call takes the trace once, as it begins, and writes to that one
// until it ends, whatever starts or stops meanwhile: so a launch is wholly
// in a trace or wholly absent from it. stop() empties the slot and returns
// once every call that took the trace has let go of it, so that the session
// writes nothing more to that trace after stop() returns.
//
//   if (TraceSlot::Held T = Slot.take())   // once, when the call begins
//     ...;                                 // the call's work
//   if (T)
//     T->launched(...);                    // when it ends
//
// Thread safety: every method may be called from any thread. Current is
// under M; On says whether Current is set, so that a call made while nothing
// traces costs one atomic load and takes no lock. A thread that holds a
// trace must not call stop(), which would wait for it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRACE_TRACESLOT_H
#define CATALYST_REMOTE_TRACE_TRACESLOT_H

#include "SessionTrace.h"
#include "sync/Mutex.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <memory>

namespace catalyst::remote {

struct TraceRelease;

class TraceSlot {
public:
  using Held = std::shared_ptr<SessionTrace>;

  // The trace on now, or null.
  Held take() const;
  // Whether a trace is on now.
  bool on() const { return On.load(std::memory_order_acquire); }
  // An error naming the file traced to when a trace is on: what start()
  // would fail with, for failing before the work of making a trace.
  llvm::Error checkOff() const;

  // Puts T in the slot, and returns it held by the caller; fails, naming
  // the file traced to, when a trace is on already.
  llvm::Expected<Held> start(std::unique_ptr<SessionTrace> T);

  // Empties the slot and waits until no call holds the trace that was in
  // it. Nothing to do when it was empty.
  void stop();

private:
  mutable sync::Mutex M;
  Held Current GUARDED_BY(M);
  // Told, by the deleter of the trace in Current, when the last holder
  // let go of it.
  std::shared_ptr<TraceRelease> Released GUARDED_BY(M);
  // Whether Current holds a trace: set under M, read without it by on().
  std::atomic<bool> On{false};
};

} // namespace catalyst::remote

#endif
