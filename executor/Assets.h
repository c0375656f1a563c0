//===- Assets.h - Files a host stores beside its kernels --------*- C++ -*-===//
//
// One directory per connection, <tmp>/catalyst-assets/<connection pid>, so
// concurrent sessions never see each other's files; removed when the
// connection ends.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_ASSETS_H
#define CATALYST_REMOTE_EXECUTOR_ASSETS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace catalyst::remote::executor {

// The asset directory of the connection served by process Pid.
std::string assetDirectory(int Pid);
std::string assetDirectory();

// Writes Bytes to a temporary name in the asset directory and renames it to
// the file name of Name, so a reader never sees a partial asset.
llvm::Error storeAsset(llvm::ArrayRef<char> Bytes, llvm::StringRef Name);

void removeAssets(int Pid);
void removeAssets();

} // namespace catalyst::remote::executor

#endif
