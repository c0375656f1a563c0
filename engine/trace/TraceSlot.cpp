//===- TraceSlot.cpp - The trace a session writes to, now -----------------===//

#include "TraceSlot.h"

#include "sync/Mutex.h"

using namespace llvm;

namespace catalyst::remote {

// Shared by a slot and the deleter of the trace it held, so that whichever
// of them goes last frees it: stop() may return while the deleter still
// holds the mutex it just signalled under.
struct TraceRelease {
  sync::Mutex M;
  sync::CondVar CV;
  bool Done GUARDED_BY(M) = false;
};

TraceSlot::Held TraceSlot::take() const {
  if (!on())
    return nullptr;
  sync::MutexLock Lock(M);
  return Current;
}

namespace {

Error onAlready(const SessionTrace &Current) {
  return createStringError(std::make_error_code(std::errc::device_or_resource_busy),
                           "a trace to '%s' is on already (stopTrace ends it; a session opened "
                           "with SessionOptions::TracePath or CATALYST_REMOTE_TRACE traces from "
                           "its start)",
                           Current.path().c_str());
}

} // namespace

Error TraceSlot::checkOff() const {
  if (Held T = take())
    return onAlready(*T);
  return Error::success();
}

Expected<TraceSlot::Held> TraceSlot::start(std::unique_ptr<SessionTrace> T) {
  auto Release = std::make_shared<TraceRelease>();
  Held Trace(T.release(), [Release](SessionTrace *Ended) {
    delete Ended;
    sync::MutexLock Lock(Release->M);
    Release->Done = true;
    Release->CV.notify_all();
  });
  sync::MutexLock Lock(M);
  if (Current)
    return onAlready(*Current);
  Current = Trace;
  Released = std::move(Release);
  On.store(true, std::memory_order_release);
  return Trace;
}

void TraceSlot::stop() {
  Held Old;
  std::shared_ptr<TraceRelease> Release;
  {
    sync::MutexLock Lock(M);
    On.store(false, std::memory_order_release);
    Old = std::move(Current);
    Current = nullptr;
    Release = std::move(Released);
  }
  if (!Old)
    return;
  Old.reset();
  // Each holder is a call in flight, which ends (or is ended, by the
  // session's liveness and launch timeouts) on its own.
  sync::UniqueLock Lock(Release->M);
  Release->CV.wait(Lock, [&]() REQUIRES(Release->M) { return Release->Done; });
}

} // namespace catalyst::remote
