//===- Assets.h - Files a host stores beside its kernels --------*- C++ -*-===//
//
// The listener makes one private root per executor, <tmp>/catalyst-remote-
// XXXXXX (mkdtemp, mode 0700), before it forks; each connection process makes
// <root>/<its pid> in it. Another local user can neither guess the root's
// name nor enter it, so nothing can be planted on the way to an asset, and the
// listener still finds a crashed connection's directory by its pid. Kernels
// and plugins find the directory in the environment variable AssetDirEnv.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_ASSETS_H
#define CATALYST_REMOTE_EXECUTOR_ASSETS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace catalyst::remote::executor {

// Set in each connection process to its asset directory.
inline constexpr const char *AssetDirEnv = "CATALYST_REMOTE_ASSET_DIR";

// In the listener, before it forks: makes the executor's private root under
// $TMPDIR (else /tmp).
llvm::Error createAssetRoot();
// In the listener, when it stops: removes the root and all left in it.
void removeAssetRoot();

// In a connection process, while it is still single-threaded (it sets
// AssetDirEnv): makes and checks the connection's directory.
llvm::Error createAssetDirectory();
// The connection's asset directory, "" when there is none.
const std::string &assetDirectory();

// Writes Bytes to a fresh temporary file in the asset directory and renames
// it to Name, so a reader never sees a partial asset. Name must be a plain
// file name: no '/', not "." or "..", no NUL.
llvm::Error storeAsset(llvm::ArrayRef<char> Bytes, llvm::StringRef Name);

// The listener, once it reaped connection process Pid, which may have died
// without removing its directory.
void removeAssets(int Pid);
// A connection process, on its way out.
void removeAssets();

} // namespace catalyst::remote::executor

#endif
