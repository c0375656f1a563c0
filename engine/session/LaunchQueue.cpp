//===- LaunchQueue.cpp - A session's launches run in the background -------===//

#include "LaunchQueue.h"

#include "catalyst/remote/Failure.h"

using namespace llvm;

namespace catalyst::remote {

LaunchQueue::~LaunchQueue() {
  // Session::close drained the queue and returned its errors; what is left
  // was queued since, on the closed session, and nobody awaits it now.
  consumeError(drain());
}

uint64_t LaunchQueue::submit(Job J) {
  sync::MutexLock Lock(M);
  uint64_t Ticket = NextTicket++;
  Queue.emplace_back(Ticket, std::move(J));
  if (!Worker.joinable()) {
    Stopping = false;
    Worker = std::thread([this] { run(); });
  }
  Changed.notify_all();
  return Ticket;
}

Error LaunchQueue::await(uint64_t Ticket) {
  sync::UniqueLock Lock(M);
  auto Known = [&]() REQUIRES(M) {
    return Finished.count(Ticket) || Running == Ticket ||
           llvm::any_of(Queue, [&](auto &Q) { return Q.first == Ticket; });
  };
  if (!Known())
    return makeFailure(FailureKind::BadArgument, "no pending launch " + Twine(Ticket) +
                                                     " in this session (already awaited?)");
  Changed.wait(Lock, [&]() REQUIRES(M) { return Finished.count(Ticket) > 0; });
  auto It = Finished.find(Ticket);
  Error Result = std::move(It->second);
  Finished.erase(It);
  return Result;
}

Error LaunchQueue::drain() {
  sync::UniqueLock Lock(M);
  Changed.wait(Lock, [&]() REQUIRES(M) { return Queue.empty() && !Running; });
  Stopping = true;
  Changed.notify_all();
  Error Unclaimed = Error::success();
  for (auto &KV : Finished)
    Unclaimed = joinErrors(std::move(Unclaimed), std::move(KV.second));
  Finished.clear();
  std::thread W = std::move(Worker);
  Lock.unlock();
  if (W.joinable())
    W.join();
  return Unclaimed;
}

void LaunchQueue::run() {
  sync::UniqueLock Lock(M);
  for (;;) {
    Changed.wait(Lock, [&]() REQUIRES(M) { return Stopping || !Queue.empty(); });
    if (Queue.empty())
      return;
    auto [Ticket, J] = std::move(Queue.front());
    Queue.pop_front();
    Running = Ticket;
    Lock.unlock();
    Error Result = J();
    Lock.lock();
    Running = 0;
    Finished.emplace(Ticket, std::move(Result));
    Changed.notify_all();
  }
}

} // namespace catalyst::remote
