//===- ReadableMemory.cpp - Finding memory a send would fault on ----------===//

#include "ReadableMemory.h"

#include "llvm/Support/FormatVariadic.h"

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <mutex>
#include <pthread.h>
#include <string>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

// Reads one byte of each page it is given, 1024 pages (IOV_MAX) per system
// call, and remembers the first page that could not be read.
// getpid() is a system call per launch; the executor forks a process per
// connection, so the cached value is renewed in each child.
pid_t ownPid() {
  static std::atomic<pid_t> Pid{0};
  static std::once_flag Once;
  std::call_once(Once, [] { ::pthread_atfork(nullptr, nullptr, [] { Pid = ::getpid(); }); });
  pid_t P = Pid.load(std::memory_order_relaxed);
  if (P == 0)
    Pid = P = ::getpid();
  return P;
}

class PageProbe {
public:
  explicit PageProbe(uintptr_t PageSize) : Mask(~(PageSize - 1)) {}

  // Probes the page holding Addr unless it was the last one added.
  void add(uintptr_t Addr) {
    uintptr_t Page = Addr & Mask;
    if (Page == Last || Bad)
      return;
    Last = Page;
    Remote[Count++] = {reinterpret_cast<void *>(Page), 1};
    if (Count == Batch)
      flush();
  }

  // The first unreadable page, or 0 when every page added could be read.
  uintptr_t finish() {
    flush();
    return Bad;
  }

private:
  static constexpr size_t Batch = 1024;

  void flush() {
    if (Count == 0 || Bad)
      return;
    char Sink[Batch];
    iovec Local{Sink, Count};
    ssize_t Read = ::process_vm_readv(ownPid(), &Local, 1, Remote, Count, 0);
    // Each remote piece is one byte, so a partial read stops at the first
    // unreadable page. Any error but EFAULT (ENOSYS, EPERM under seccomp,
    // ENOMEM) is no verdict on the memory: nothing more can be probed.
    if (Read >= 0 && size_t(Read) < Count)
      Bad = reinterpret_cast<uintptr_t>(Remote[Read].iov_base);
    else if (Read < 0 && errno == EFAULT)
      Bad = reinterpret_cast<uintptr_t>(Remote[0].iov_base);
    Count = 0;
  }

  uintptr_t Mask;
  uintptr_t Last = 0;
  uintptr_t Bad = 0;
  size_t Count = 0;
  iovec Remote[Batch];
};

uintptr_t pageSize() {
  static const uintptr_t Size = uintptr_t(::sysconf(_SC_PAGESIZE));
  return Size;
}

// MADV_POPULATE_READ (Linux 5.14) checks a whole range in one call, half
// the cost of process_vm_readv for one page: it fails where a read would
// fault. It also fails on mappings it cannot populate (device memory), and
// on kernels without it, so a failure only sends the range to the precise
// probe, which decides.
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
bool populatesReadable(uintptr_t First, uintptr_t End, uintptr_t Page) {
  uintptr_t Start = First & ~(Page - 1);
  return ::madvise(reinterpret_cast<void *>(Start), End - Start, MADV_POPULATE_READ) == 0;
}

// Large runs are judged from the process's mappings instead: reading
// /proc/self/maps costs the same for 16 MiB as for 16 GiB, where
// MADV_POPULATE_READ walks every page, a cost that grows with the run.
// Memory in a readable anonymous mapping can be
// read; the parts of a run in file-backed mappings (which fault past the end
// of their file) are still populated.
constexpr uintptr_t MapsThreshold = 16 << 20;

std::string readMaps() {
  std::string Text;
  int Fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return Text;
  char Buf[16384];
  for (;;) {
    ssize_t N = ::read(Fd, Buf, sizeof(Buf));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      break;
    Text.append(Buf, size_t(N));
  }
  ::close(Fd);
  return Text;
}

// One line of /proc/self/maps: "start-end perms offset dev inode path".
struct Mapping {
  uintptr_t Start, End;
  bool Readable, Anonymous;
};

bool parseMapping(StringRef Line, Mapping &M) {
  StringRef Range, Perms, Offset, Dev, Inode;
  std::tie(Range, Line) = Line.split(' ');
  std::tie(Perms, Line) = Line.split(' ');
  std::tie(Offset, Line) = Line.split(' ');
  std::tie(Dev, Line) = Line.split(' ');
  std::tie(Inode, Line) = Line.ltrim().split(' ');
  auto [Start, End] = Range.split('-');
  uint64_t InodeNumber;
  if (Start.getAsInteger(16, M.Start) || End.getAsInteger(16, M.End) || Perms.empty() ||
      Inode.getAsInteger(10, InodeNumber))
    return false;
  M.Readable = Perms[0] == 'r';
  M.Anonymous = InodeNumber == 0;
  return true;
}

// Whether [First, End) lies in readable mappings without a gap, its
// file-backed parts populated; false too when /proc cannot tell.
bool mappedReadable(StringRef Maps, uintptr_t First, uintptr_t End, uintptr_t Page) {
  uintptr_t Cursor = First;
  while (Cursor < End && !Maps.empty()) {
    StringRef Line;
    std::tie(Line, Maps) = Maps.split('\n');
    Mapping M;
    if (!parseMapping(Line, M))
      return false;
    if (M.End <= Cursor)
      continue;
    if (M.Start > Cursor || !M.Readable)
      return false; // a gap, or memory that cannot be read
    uintptr_t To = std::min(M.End, End);
    if (!M.Anonymous && !populatesReadable(Cursor, To, Page))
      return false;
    Cursor = To;
  }
  return Cursor >= End;
}

// Adds the first and last byte of every element, in row-major order.
void addElements(PageProbe &P, const MemrefDesc &D, size_t ElemSize, uint64_t Elements) {
  int64_t Index[MaxRank] = {};
  uintptr_t Base = reinterpret_cast<uintptr_t>(D.aligned());
  for (uint64_t E = 0; E < Elements; ++E) {
    // layoutOf bounded every element's offset, in elements and in bytes.
    int64_t Off = D.offset();
    for (size_t K = 0; K < D.rank(); ++K)
      Off += Index[K] * D.stride(K);
    uintptr_t Addr = Base + uintptr_t(Off * int64_t(ElemSize));
    P.add(Addr);
    P.add(Addr + ElemSize - 1);
    for (size_t K = D.rank(); K-- > 0;) {
      if (++Index[K] < D.size(K))
        break;
      Index[K] = 0;
    }
  }
}

// The span of D's values, and whether it has so few of them for its pages
// that probing them one by one takes fewer probes.
struct Span {
  uintptr_t First, End;
  uint64_t Pages;
  bool Sparse;
};

Span spanOf(const MemrefDesc &D, size_t ElemSize, const MemrefLayout &L) {
  uintptr_t Page = pageSize();
  Span S;
  S.First =
      reinterpret_cast<uintptr_t>(D.aligned()) + uintptr_t(L.FirstElement * int64_t(ElemSize));
  S.End = S.First + L.SpanBytes; // layoutOf: no wrap
  S.Pages = (S.End - 1) / Page - S.First / Page + 1;
  S.Sparse = !L.Dense && L.Elements < S.Pages / 2;
  return S;
}

} // namespace

Error checkReadable(const MemrefDesc &D, size_t ElemSize, const MemrefLayout &L, MemrefName Name) {
  if (L.Elements == 0)
    return Error::success();
  uintptr_t Page = pageSize();
  Span S = spanOf(D, ElemSize, L);
  PageProbe P(Page);
  if (S.Sparse) {
    addElements(P, D, ElemSize, L.Elements);
  } else if (populatesReadable(S.First, S.End, Page)) {
    return Error::success();
  } else {
    for (uint64_t I = 0; I < S.Pages; ++I)
      P.add(I ? (S.First & ~(Page - 1)) + I * Page : S.First);
  }
  uintptr_t Bad = P.finish();
  if (!Bad)
    return Error::success();
  return createStringError(inconvertibleErrorCode(), Twine(Name.Role) + " " + Twine(Name.Index) +
                                                         ": memory at " + formatv("{0:x}", Bad) +
                                                         " is not readable (its values span " +
                                                         Twine(L.SpanBytes) + " bytes from " +
                                                         formatv("{0:x}", S.First) + ")");
}

void ReadableSet::add(const MemrefDesc &D, size_t ElemSize, const MemrefLayout &L,
                      MemrefName Name) {
  if (L.Elements == 0)
    return;
  Span S = spanOf(D, ElemSize, L);
  uintptr_t Page = pageSize();
  // A sparse view has no pages of its own to merge: zero marks it.
  uintptr_t First = S.Sparse ? 0 : S.First & ~(Page - 1);
  uintptr_t End = S.Sparse ? 0 : First + S.Pages * Page;
  Members.push_back({D, ElemSize, L, Name, First, End});
}

// One system call per run of pages the spans cover without a gap; when
// any fails, each memref alone, in order, to name the first bad one (or to
// find them all readable after all: the call also fails on memory it
// cannot populate, which may still be read).
Error ReadableSet::check() {
  SmallVector<std::pair<uintptr_t, uintptr_t>, 8> Runs;
  for (const Member &M : Members)
    if (M.End != 0)
      Runs.push_back({M.First, M.End});
  llvm::sort(Runs);
  uintptr_t Page = pageSize();
  std::string Maps; // read once, for the first large run
  for (size_t I = 0; I < Runs.size();) {
    uintptr_t First = Runs[I].first, End = Runs[I].second;
    for (++I; I < Runs.size() && Runs[I].first <= End; ++I)
      End = std::max(End, Runs[I].second);
    bool Large = End - First >= MapsThreshold;
    if (Large && Maps.empty())
      Maps = readMaps();
    if (!(Large ? mappedReadable(Maps, First, End, Page) : populatesReadable(First, End, Page)))
      return checkEach();
  }
  for (const Member &M : Members) {
    if (M.End != 0)
      continue;
    if (Error Err = checkReadable(M.D, M.ElemSize, M.L, M.Name)) {
      // checkEach fails on this memref again at the latest, or on one
      // added before it: that error replaces this one.
      consumeError(std::move(Err));
      return checkEach();
    }
  }
  return Error::success();
}

Error ReadableSet::checkEach() const {
  for (const Member &M : Members)
    if (Error Err = checkReadable(M.D, M.ElemSize, M.L, M.Name))
      return Err;
  return Error::success();
}

} // namespace catalyst::remote::wire
