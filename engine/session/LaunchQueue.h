//===- LaunchQueue.h - A session's launches run in the background -*- C++ -*-===//
//
// Asynchronous launches of one session run in order on one thread of its
// own: a session's launches take turns anyway (they share its slab), while
// those of different sessions overlap, which is what lets a host keep
// several executors busy at once.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_LAUNCHQUEUE_H
#define CATALYST_REMOTE_SESSION_LAUNCHQUEUE_H

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
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
  void run();

  std::mutex M;
  std::condition_variable Changed;
  std::deque<std::pair<uint64_t, Job>> Queue;
  std::map<uint64_t, llvm::Error> Finished;
  uint64_t NextTicket = 1;
  uint64_t Running = 0; // ticket of the job in progress, 0 when none
  bool Stopping = false;
  std::thread Worker; // started by the first submit
};

} // namespace catalyst::remote

#endif
