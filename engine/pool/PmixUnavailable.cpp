//===- PmixUnavailable.cpp - pool:pmix in a build without PMIx ------------===//
//
// Built in place of PmixSource.cpp where pkg-config found no pmix.
//
//===----------------------------------------------------------------------===//

#include "MemberSource.h"

namespace catalyst::remote::pool {

llvm::Expected<std::unique_ptr<MemberSource>> pmixSource() {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "pool:pmix: this library was built without PMIx (Debian: "
                                 "libpmix-dev); use pool:DIR with --announce DIR instead");
}

} // namespace catalyst::remote::pool
