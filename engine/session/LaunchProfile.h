//===- LaunchProfile.h - One line per launch on stderr ----------*- C++ -*-===//
//
// SessionOptions::Profile (CATALYST_REMOTE_PROFILE=1): after each
// successful launch, one line on stderr with its strategy and transport,
// round trips, messages, bytes each way, copies on each side, the slab's
// use and the time of each phase, for a user comparing strategies
// without a trace viewer.
//
// Thread safety: any thread; each line is written with one write.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_LAUNCHPROFILE_H
#define CATALYST_REMOTE_SESSION_LAUNCHPROFILE_H

#include "catalyst/remote/SessionOptions.h"
#include "catalyst/remote/Stats.h"

#include "llvm/ADT/StringRef.h"

namespace catalyst::remote {

void printProfile(llvm::StringRef Entry, const char *Strategy, TransportKind Over,
                  const LaunchStats &S);

} // namespace catalyst::remote

#endif
