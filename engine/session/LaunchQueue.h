//===- LaunchQueue.h - A session's launches run in the background -*- C++ -*-===//
//
// Asynchronous launches of one session run in order on one thread of its
// own: a session's launches take turns anyway (they share its slab), while
// those of different sessions overlap, which is what lets a host keep
// several executors busy at once.
//
// Threads: submit(), await() and drain() are for any thread (the session's
// callers, and close()); the queue's own worker thread runs run(), each
// job on it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_LAUNCHQUEUE_H
#define CATALYST_REMOTE_SESSION_LAUNCHQUEUE_H

#include "sync/Mutex.h"

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"

#include <deque>
#include <map>
#include <thread>

namespace catalyst::remote {

class LaunchQueue {
public:
  using Job = llvm::unique_function<llvm::Error()>;

  ~LaunchQueue();

  // Queues Job and returns its ticket.
  uint64_t submit(Job J);
  // Waits for the job with Ticket and returns its result, once.
  llvm::Error await(uint64_t Ticket);
  // Waits for every job, stops the thread, and returns the errors of the
  // jobs nobody awaited.
  llvm::Error drain();

private:
  void run() EXCLUDES(M);

  sync::Mutex M;
  sync::CondVar Changed; // with M: any of the members below changed
  std::deque<std::pair<uint64_t, Job>> Queue GUARDED_BY(M);
  std::map<uint64_t, llvm::Error> Finished GUARDED_BY(M);
  uint64_t NextTicket GUARDED_BY(M) = 1;
  uint64_t Running GUARDED_BY(M) = 0; // ticket of the job in progress, 0 when none
  bool Stopping GUARDED_BY(M) = false;
  std::thread Worker GUARDED_BY(M); // started by the first submit
};

} // namespace catalyst::remote

#endif
