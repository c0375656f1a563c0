//===- SentAssets.h - Which file a session stored under each name -*- C++ -*-===//
//
// The executor keeps assets by file name, so a session remembers, per
// name, which file it stored there (symlinks resolved) and a hash of its
// bytes: a second file under a name already taken is refused, naming
// both, and a file sent again is skipped unless its bytes changed.
//
//   SentAsset Now = SentAsset::of(Path, Bytes);
//   auto Stored = Assets.isStored(Name, Now); // an error: another file
//   if (Stored && !*Stored) { ...send...; Assets.record(Name, Now); }
//
// Thread safety: none; the session holds its asset lock across a send.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_SENTASSETS_H
#define CATALYST_REMOTE_SESSION_SENTASSETS_H

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace catalyst::remote {

// One file as stored under a name.
struct SentAsset {
  std::string Source; // the file it came from, symlinks resolved
  std::string Shown;  // as the caller named it
  uint64_t Hash;
  uint64_t Size;

  // Path, just read, whose bytes are Bytes.
  static SentAsset of(llvm::StringRef Path, llvm::StringRef Bytes);
};

class SentAssets {
public:
  // Whether Now is stored already as Name; a BadArgument failure naming
  // both files when another file is.
  llvm::Expected<bool> isStored(llvm::StringRef Name, const SentAsset &Now) const;
  void record(llvm::StringRef Name, SentAsset Now) { Sent[Name] = std::move(Now); }

private:
  llvm::StringMap<SentAsset> Sent; // by file name, as the executor keeps them
};

} // namespace catalyst::remote

#endif
