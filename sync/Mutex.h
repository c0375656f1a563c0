//===- Mutex.h - Locks that Clang's thread-safety analysis sees -*- C++ -*-===//
//
// std::mutex and std::shared_mutex, and the scoped locks over them, with
// the attributes of ThreadSafety.h: a member declared GUARDED_BY(M) of a
// sync::Mutex M is then checked by Clang (tools/thread-safety-check) to be
// touched only with M held. Thin: each call is the standard one.
//
//   sync::Mutex M;
//   int Count GUARDED_BY(M) = 0;
//   { sync::MutexLock Lock(M); ++Count; }                  // a block's lock
//   { sync::UniqueLock Lock(M);                            // one to wait with
//     Changed.wait(Lock, [&]() REQUIRES(M) { return Count > 0; }); }
//
// A predicate or other lambda that reads guarded members says REQUIRES(M):
// the analysis checks a lambda's body as a function of its own.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SYNC_MUTEX_H
#define CATALYST_REMOTE_SYNC_MUTEX_H

#include "sync/ThreadSafety.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

namespace catalyst::remote::sync {

class CAPABILITY("mutex") Mutex {
public:
  Mutex() = default;
  Mutex(const Mutex &) = delete;
  Mutex &operator=(const Mutex &) = delete;

  void lock() ACQUIRE() { M.lock(); }
  void unlock() RELEASE() { M.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return M.try_lock(); }

  // Tells the analysis, where it cannot see it, that the caller holds
  // this lock (the caller's comment says why); checks nothing at run time.
  void assertHeld() const ASSERT_CAPABILITY(this) {}

private:
  friend class UniqueLock;
  std::mutex M;
};

// Holds a Mutex, or a SharedMutex exclusively, for a block.
template <typename Lockable> class SCOPED_CAPABILITY ExclusiveLock {
public:
  explicit ExclusiveLock(Lockable &M) ACQUIRE(M) : M(M) { M.lock(); }
  ~ExclusiveLock() RELEASE() { M.unlock(); }
  ExclusiveLock(const ExclusiveLock &) = delete;
  ExclusiveLock &operator=(const ExclusiveLock &) = delete;

private:
  Lockable &M;
};

// Holds M for a block, but may let it go and take it again, and waits on a
// CondVar (or a std::condition_variable_any: it is BasicLockable).
class SCOPED_CAPABILITY UniqueLock {
public:
  explicit UniqueLock(Mutex &M) ACQUIRE(M) : L(M.M) {}
  // Takes over M, which the caller already holds (a function that returns
  // holding it says ACQUIRE(M)).
  UniqueLock(Mutex &M, std::adopt_lock_t) REQUIRES(M) : L(M.M, std::adopt_lock) {}
  ~UniqueLock() RELEASE() {}
  UniqueLock(const UniqueLock &) = delete;
  UniqueLock &operator=(const UniqueLock &) = delete;

  void lock() ACQUIRE() { L.lock(); }
  void unlock() RELEASE() { L.unlock(); }

  // The standard lock, for std::condition_variable.
  std::unique_lock<std::mutex> &native() { return L; }

private:
  std::unique_lock<std::mutex> L;
};

// std::condition_variable over a UniqueLock. Each wait returns with the
// lock held again, as it was called.
class CondVar {
public:
  void notify_one() noexcept { CV.notify_one(); }
  void notify_all() noexcept { CV.notify_all(); }

  void wait(UniqueLock &Lock) { CV.wait(Lock.native()); }
  template <typename Pred> void wait(UniqueLock &Lock, Pred Ready) {
    CV.wait(Lock.native(), std::move(Ready));
  }
  template <typename Rep, typename Period>
  std::cv_status wait_for(UniqueLock &Lock, const std::chrono::duration<Rep, Period> &D) {
    return CV.wait_for(Lock.native(), D);
  }
  template <typename Rep, typename Period, typename Pred>
  bool wait_for(UniqueLock &Lock, const std::chrono::duration<Rep, Period> &D, Pred Ready) {
    return CV.wait_for(Lock.native(), D, std::move(Ready));
  }
  template <typename Clock, typename Duration>
  std::cv_status wait_until(UniqueLock &Lock, const std::chrono::time_point<Clock, Duration> &T) {
    return CV.wait_until(Lock.native(), T);
  }
  template <typename Clock, typename Duration, typename Pred>
  bool wait_until(UniqueLock &Lock, const std::chrono::time_point<Clock, Duration> &T, Pred Ready) {
    return CV.wait_until(Lock.native(), T, std::move(Ready));
  }

private:
  std::condition_variable CV;
};

// A lock that many readers or one writer hold.
class CAPABILITY("shared mutex") SharedMutex {
public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex &) = delete;
  SharedMutex &operator=(const SharedMutex &) = delete;

  void lock() ACQUIRE() { M.lock(); }
  void unlock() RELEASE() { M.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return M.try_lock(); }
  void lock_shared() ACQUIRE_SHARED() { M.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { M.unlock_shared(); }

private:
  std::shared_mutex M;
};

using MutexLock = ExclusiveLock<Mutex>;
using WriterLock = ExclusiveLock<SharedMutex>;

// Holds M shared for a block.
class SCOPED_CAPABILITY ReaderLock {
public:
  explicit ReaderLock(SharedMutex &M) ACQUIRE_SHARED(M) : M(M) { M.lock_shared(); }
  ~ReaderLock() RELEASE() { M.unlock_shared(); }
  ReaderLock(const ReaderLock &) = delete;
  ReaderLock &operator=(const ReaderLock &) = delete;

private:
  SharedMutex &M;
};

} // namespace catalyst::remote::sync

#endif
