//===- OutputForecast.h - Output buffers ready before they arrive -*- C++ -*-===//
//
// A fresh host buffer faults in page by page as the receive writes it: for
// a 256 MiB output, as long as the transfer itself. A launch of the same
// entry as before usually returns outputs of the same sizes, so the session
// allocates them (from the caller's allocator, still the caller's to free)
// and faults them in on a thread of its own while the request travels and
// the kernel runs. The receive then takes a ready buffer when the size is
// right; a wrong guess costs the guess, which is released at the end of the
// launch.
//
// Threads: begin() and end() on the launching thread (under the session's
// LaunchMutex); take() on whoever receives the outputs (the launching
// thread, or the transport's reader); the preparing thread (Preparer)
// runs run() and prepare().
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_OUTPUTFORECAST_H
#define CATALYST_REMOTE_TRANSFER_OUTPUTFORECAST_H

#include "catalyst/remote/Launch.h"
#include "catalyst/remote/OutputAllocator.h"
#include "sync/Mutex.h"

#include "llvm/ADT/ArrayRef.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <unordered_map>
#include <vector>

namespace catalyst::remote {

class OutputForecast {
public:
  // Outputs smaller than MinBytes are not worth a guess.
  explicit OutputForecast(OutputAllocator Alloc, uint64_t MinBytes = uint64_t(1) << 20);
  ~OutputForecast();
  OutputForecast(const OutputForecast &) = delete;
  OutputForecast &operator=(const OutputForecast &) = delete;

  // Starts preparing the outputs of a launch of Entry from the sizes its
  // last launch returned; Lent[I] set means output I needs no buffer.
  void begin(uint64_t Entry, llvm::ArrayRef<MemrefArg> Outputs, llvm::ArrayRef<bool> Lent);
  // A ready buffer of exactly Bytes for output I, now the caller's; null
  // when there is none. Waits while output I is being prepared.
  char *take(size_t I, uint64_t Bytes);
  // Ends the launch begun: releases what was not taken and, when Returned
  // holds every output's size (the launch succeeded), remembers it.
  void end(uint64_t Entry, llvm::ArrayRef<uint64_t> Returned);

private:
  enum class State { None, Preparing, Ready };
  struct Guess {
    uint64_t Bytes = 0;
    char *Buffer = nullptr;
    State S = State::None;
  };
  void run() EXCLUDES(M);
  void prepare(size_t I, uint64_t Bytes) EXCLUDES(M);

  const OutputAllocator Alloc;
  const uint64_t MinBytes;
  // Guarded by M: the current launch's guesses (the preparing thread
  // fills them; whoever places the launch's result takes them: the
  // launching thread, or the transport's reader thread when it reads a
  // zero-copy result first), the work queued for the
  // preparing thread and whether it should stop.
  sync::Mutex M;
  sync::CondVar Changed; // with M: a guess's state, the queue or Stopping changed
  std::vector<Guess> Guesses GUARDED_BY(M);
  size_t Queued GUARDED_BY(M) = 0; // guesses from here on await the preparing thread
  // Whether the current launch has any guess: set by begin() before the
  // launch is sent, cleared by end(), read by take() without M, so that a
  // launch of many small outputs, none guessed, takes no lock per output.
  std::atomic<bool> Guessing{false};
  bool Stopping GUARDED_BY(M) = false;
  // Sizes each entry last returned; the launching thread's alone (the
  // session's launch lock), as is the thread, started on first need.
  std::unordered_map<uint64_t, std::vector<uint64_t>> Last;
  std::thread Preparer;
};

} // namespace catalyst::remote

#endif
