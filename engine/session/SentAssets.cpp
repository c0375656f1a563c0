//===- SentAssets.cpp - Which file a session stored under each name -------===//

#include "SentAssets.h"

#include "catalyst/remote/Failure.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/xxhash.h"

using namespace llvm;

namespace catalyst::remote {

namespace {

// One file named two ways is still one file.
std::string sourceOf(StringRef Path) {
  SmallString<256> Real;
  if (sys::fs::real_path(Path, Real))
    return Path.str(); // it was just read: only a race makes this fail
  return Real.str().str();
}

} // namespace

SentAsset SentAsset::of(StringRef Path, StringRef Bytes) {
  return {sourceOf(Path), Path.str(), xxh3_64bits(arrayRefFromStringRef(Bytes)), Bytes.size()};
}

Expected<bool> SentAssets::isStored(StringRef Name, const SentAsset &Now) const {
  auto It = Sent.find(Name);
  if (It == Sent.end())
    return false;
  if (It->second.Source != Now.Source)
    return makeFailure(FailureKind::BadArgument,
                       "'" + Now.Shown + "' has the same file name as '" + It->second.Shown +
                           "', already stored as asset '" + Name +
                           "': the executor keeps assets by file name, so one would replace the "
                           "other (rename one of them)");
  return It->second.Hash == Now.Hash && It->second.Size == Now.Size;
}

} // namespace catalyst::remote
