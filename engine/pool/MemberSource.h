//===- MemberSource.h - Where a pool learns its members ---------*- C++ -*-===//
//
// A pool's members are executors that announced themselves: files in a
// directory they share with the host (executor --announce DIR), values
// published through PMIx in the host's own job (--announce pmix), or a
// list of addresses given up front. A MemberSource reads one of those and
// says which members are announced now; the pool polls it, joins members
// that appear and forgets those whose announcement goes (their executor
// withdrew it on stopping).
//
//   auto Source = memberSourceFor("pool:/shared/job42");  // "pool:" stripped
//   auto Now = (*Source)->poll();   // [{Name, Address}, ...]
//
// Announcements are written by other processes, possibly on other
// machines: every value read is bounded and checked before use, and one
// that cannot be read or does not parse is skipped, not fatal (it may be
// a file being replaced, or a stray file in the directory).
//
// Thread safety: poll() is called by one thread at a time (the pool's
// watcher); describe() may be called by any thread at once with it (a
// launch picking a member reads it), so it reads only what was fixed at
// construction. Different sources are independent.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_ENGINE_POOL_MEMBERSOURCE_H
#define CATALYST_REMOTE_ENGINE_POOL_MEMBERSOURCE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace catalyst::remote::pool {

// One announced executor. Name identifies the announcement (a file's name
// without ".addr", a PMIx rank, or the address itself) and is unique
// within a source; Address is what Session::open dials.
struct Announced {
  std::string Name;
  std::string Address;
};

class MemberSource {
public:
  virtual ~MemberSource();

  // The members announced now, in a stable order. Fails only when the
  // source itself is gone (the directory removed, PMIx lost), saying so.
  virtual llvm::Expected<std::vector<Announced>> poll() = 0;

  // What the source reads, for messages: "directory /shared/job42",
  // "PMIx namespace slurm.pmix.42.0", "3 listed addresses".
  virtual std::string describe() const = 0;
};

// The source a pool address names, given without its "pool:" prefix:
//   "pmix"                      the executors of this process's PMIx job;
//   a path (starts with '/' or '.', or has no ':')  a directory;
//   "ADDR1,ADDR2,..."           those addresses (host:port, unix:PATH).
// Fails on an empty spec or list entry, naming it.
llvm::Expected<std::unique_ptr<MemberSource>> memberSourceFor(llvm::StringRef Spec);

std::unique_ptr<MemberSource> directorySource(std::string Dir);
std::unique_ptr<MemberSource> listSource(std::vector<std::string> Addresses);
// Initializes PMIx (the process must have been started by a PMIx launcher:
// mpirun, srun --mpi=pmix) and reads the address each other process of
// its job published under --announce pmix. Fails, saying so, when this
// process is not part of a PMIx job or the library was built without PMIx.
llvm::Expected<std::unique_ptr<MemberSource>> pmixSource();

} // namespace catalyst::remote::pool

#endif
