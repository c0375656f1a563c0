//===- Assets.h - Files a host stores beside its kernels --------*- C++ -*-===//
//
// Where Catalyst's executor keeps them, so that Catalyst's kernels and tools
// find them: each connection process stores its host's assets in
// <root>/<its pid>, and <root> is $TMPDIR/catalyst-assets (/tmp without
// TMPDIR) when that is safe: a real directory, not a symlink, owned by the
// executor's user and writable by no one else, checked after it is opened.
// Another user who made it first, or a symlink planted there, makes the
// listener fall back to a private root of its own, <tmp>/catalyst-remote-
// XXXXXX (mkdtemp, mode 0700), and log why. Every directory and file is
// made relative to an opened, checked directory, so nothing planted on the
// way is followed. Kernels and plugins find the connection's directory in the
// environment variable AssetDirEnv.
//
// An asset is stored under the last component of the name the host sends
// (Catalyst's host sends the file's full path, this project's the file name
// alone). Two different names that end in the same file name in one session
// fail the second store rather than replace the first; the same name again
// replaces the file.
//
// Thread safety: the listener's functions run on its one thread; in a
// connection process, createAssetDirectory runs before any thread starts,
// storeAsset on any thread.
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
// The directory under $TMPDIR that Catalyst's executor and kernels use.
inline constexpr const char *SharedAssetRootName = "catalyst-assets";

// In the listener, before it forks: opens the shared root, or makes a
// private one (logging why). Fails only when neither can be had.
llvm::Error createAssetRoot();
// In the listener, when it stops: closes the root; a private root goes with
// all left in it, the shared one stays for other executors.
void removeAssetRoot();

// In a connection process, while it is still single-threaded (it sets
// AssetDirEnv): makes and checks the connection's directory.
llvm::Error createAssetDirectory();
// The connection's asset directory, "" when there is none.
const std::string &assetDirectory();

// Writes Bytes to a fresh temporary file in the asset directory and renames
// it to Name's last component, so a reader never sees a partial asset.
// Refuses a name whose last component is empty, "." or "..", a name with a
// NUL, and a name that ends like another one stored before.
llvm::Error storeAsset(llvm::ArrayRef<char> Bytes, llvm::StringRef Name);

// The listener, once it reaped connection process Pid, which may have died
// without removing its directory.
void removeAssets(int Pid);
// A connection process, on its way out.
void removeAssets();

} // namespace catalyst::remote::executor

#endif
