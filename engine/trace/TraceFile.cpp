//===- TraceFile.cpp - A Chrome trace-event file shared by sessions -------===//

#include "TraceFile.h"

#include "catalyst/remote/Failure.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote {

namespace {

constexpr StringRef Head = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
constexpr StringRef Tail = "\n]}\n";

// Files by absolute path. Never destroyed: a session closed by a static
// destructor at exit may still write.
struct Registry {
  sync::Mutex M;
  std::map<std::string, std::shared_ptr<TraceFile>> Files GUARDED_BY(M);
};

Registry &registry() {
  static Registry *R = new Registry;
  return *R;
}

std::string expandPid(StringRef Path) {
  std::string Out;
  for (size_t I = 0; I < Path.size(); ++I) {
    if (Path[I] == '%' && I + 1 < Path.size() && Path[I + 1] == 'p') {
      Out += std::to_string(::getpid());
      ++I;
    } else {
      Out += Path[I];
    }
  }
  return Out;
}

} // namespace

Expected<std::shared_ptr<TraceFile>> TraceFile::get(StringRef Given) {
  SmallString<256> Abs(expandPid(Given));
  // A path that cannot be made absolute or opened is a bad TracePath
  // (CATALYST_REMOTE_TRACE); one that fails later, a full disk, is not.
  if (std::error_code EC = sys::fs::make_absolute(Abs))
    return makeFailure(FailureKind::BadArgument, "trace file '" + Given + "': " + EC.message());
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  std::string Path = Abs.str().str();
  Registry &R = registry();
  sync::MutexLock Lock(R.M);
  if (auto It = R.Files.find(Path); It != R.Files.end())
    return It->second;
  int Fd = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (Fd < 0) {
    const char *Why = std::strerror(errno);
    return makeFailure(FailureKind::BadArgument, "cannot write trace file '" + Path + "': " + Why);
  }
  std::shared_ptr<TraceFile> F(new TraceFile(Path, Fd));
  std::string Empty = (Head + Tail).str();
  if (!F->writeAt(0, Empty))
    return createStringError(std::error_code(errno, std::generic_category()),
                             "cannot write trace file '%s': %s", Path.c_str(),
                             std::strerror(errno));
  {
    // No other thread has F yet: uncontended.
    sync::MutexLock Alone(F->M);
    F->End = Head.size();
  }
  R.Files[Path] = F;
  return F;
}

TraceFile::~TraceFile() {
  // Each write was checked as it was made (writeAt); a destructor has no one
  // to tell of what close() could add (a network file system's late errors).
  ::close(Fd);
}

bool TraceFile::writeAt(uint64_t Offset, StringRef Bytes) {
  while (!Bytes.empty()) {
    ssize_t N = ::pwrite(Fd, Bytes.data(), Bytes.size(), off_t(Offset));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Bytes = Bytes.drop_front(N);
    Offset += N;
  }
  return true;
}

void TraceFile::append(StringRef Events) {
  sync::MutexLock Lock(M);
  if (Broken || Events.empty())
    return;
  Batch.clear();
  if (!Empty)
    Batch += ",\n";
  Batch += Events;
  size_t Added = Batch.size();
  Batch += Tail;
  if (!writeAt(End, Batch)) {
    Broken = true;
    errs() << "catalyst-remote: trace file '" << Path << "': write failed (" << std::strerror(errno)
           << "); no more events go to it\n";
    return;
  }
  End += Added;
  Empty = false;
}

bool TraceFile::firstSight(uint64_t Pid, uint64_t Tid) {
  sync::MutexLock Lock(M);
  return Seen.insert({Pid, Tid}).second;
}

} // namespace catalyst::remote
