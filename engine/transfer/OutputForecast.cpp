//===- OutputForecast.cpp - Output buffers ready before they arrive -------===//

#include "OutputForecast.h"

#include "HostOutputs.h"

#include <sys/mman.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote {

namespace {

// Entries remembered at most; a program has few, and a flood of distinct
// ones only costs their guesses.
constexpr size_t MaxEntries = 1024;

// Faults Buf in for writing, in one call where the kernel can (Linux 5.14);
// by touching a byte per page otherwise.
void faultIn(char *Buf, uint64_t Bytes) {
#ifdef MADV_POPULATE_WRITE
  uintptr_t Page = uintptr_t(::sysconf(_SC_PAGESIZE));
  uintptr_t Start = (reinterpret_cast<uintptr_t>(Buf) + Page - 1) & ~(Page - 1);
  uintptr_t End = (reinterpret_cast<uintptr_t>(Buf) + Bytes) & ~(Page - 1);
  if (End <= Start ||
      ::madvise(reinterpret_cast<void *>(Start), End - Start, MADV_POPULATE_WRITE) == 0)
    return;
#endif
  for (uint64_t At = 0; At < Bytes; At += 4096)
    static_cast<volatile char *>(Buf)[At] = 0;
}

} // namespace

OutputForecast::OutputForecast(OutputAllocator Alloc, uint64_t MinBytes)
    : Alloc(Alloc), MinBytes(MinBytes) {}

OutputForecast::~OutputForecast() {
  {
    sync::MutexLock Lock(M);
    Stopping = true;
  }
  Changed.notify_all();
  if (Preparer.joinable())
    Preparer.join();
  end(0, {});
}

void OutputForecast::begin(uint64_t Entry, ArrayRef<MemrefArg> Outputs, ArrayRef<bool> Lent) {
  // Without a way to release a wrong guess, there is no guessing.
  auto It = Last.find(Entry);
  if (!Alloc.Release || It == Last.end() || It->second.size() != Outputs.size())
    return;
  bool Any = false;
  {
    sync::MutexLock Lock(M);
    Guesses.assign(Outputs.size(), Guess{});
    for (size_t I = 0; I < Outputs.size(); ++I) {
      if ((I < Lent.size() && Lent[I]) || It->second[I] < MinBytes)
        continue;
      Guesses[I] = {It->second[I], nullptr, State::Preparing};
      Any = true;
    }
    Queued = 0;
  }
  if (!Any)
    return;
  Guessing.store(true, std::memory_order_release);
  if (!Preparer.joinable())
    Preparer = std::thread([this] { run(); });
  Changed.notify_all();
}

// The preparing thread: takes the queued guesses in order.
void OutputForecast::run() {
  sync::UniqueLock Lock(M);
  for (;;) {
    Changed.wait(Lock, [this]() REQUIRES(M) { return Stopping || Queued < Guesses.size(); });
    if (Stopping)
      return;
    size_t I = Queued++;
    if (Guesses[I].S != State::Preparing)
      continue;
    uint64_t Bytes = Guesses[I].Bytes;
    Lock.unlock();
    char *Buf = static_cast<char *>(Alloc.Allocate(Bytes));
    if (Buf) {
      adviseHugePages(Buf, Bytes);
      faultIn(Buf, Bytes);
    }
    Lock.lock();
    // The launch may have ended meanwhile (end() reset the guesses): then
    // the buffer is nobody's but this thread's to give back.
    if (I < Guesses.size() && Guesses[I].S == State::Preparing && Guesses[I].Bytes == Bytes) {
      Guesses[I].Buffer = Buf;
      Guesses[I].S = State::Ready;
    } else if (Buf) {
      Alloc.Release(Buf);
    }
    Changed.notify_all();
  }
}

char *OutputForecast::take(size_t I, uint64_t Bytes) {
  if (!Guessing.load(std::memory_order_acquire))
    return nullptr;
  sync::UniqueLock Lock(M);
  if (I >= Guesses.size() || Guesses[I].Bytes != Bytes)
    return nullptr;
  Changed.wait(Lock, [&]() REQUIRES(M) { return Guesses[I].S != State::Preparing; });
  char *Buf = Guesses[I].Buffer;
  Guesses[I] = Guess{};
  return Buf;
}

void OutputForecast::end(uint64_t Entry, ArrayRef<uint64_t> Returned) {
  Guessing.store(false, std::memory_order_relaxed);
  std::vector<Guess> Left;
  {
    sync::MutexLock Lock(M);
    Left.swap(Guesses);
    Queued = 0;
  }
  for (Guess &G : Left)
    if (G.Buffer)
      Alloc.Release(G.Buffer);
  if (Returned.empty())
    return;
  if (Last.size() >= MaxEntries && !Last.count(Entry))
    Last.clear();
  Last[Entry].assign(Returned.begin(), Returned.end());
}

} // namespace catalyst::remote
