//===- PmixAnnouncement.h - Telling hosts of the job through PMIx -*- C++ -*-===//
//
// An executor started by a PMIx launcher (mpirun, srun --mpi=pmix) in the
// same job as its host (--announce pmix) publishes the address hosts
// should dial under wire::PmixAddressKey, for the host to read per rank
// (engine/pool/PmixSource.cpp says how, and why no fence).
//
//   if (auto Err = announceThroughPmix(Listeners, WakeFd)) ...  // once listening
//   if (pmixServerLost()) ...stop                              // WakeFd was written
//   endPmixAnnouncement();                                     // at exit
//
// The PMIx server is the launcher's (mpirun's, or slurmstepd's under
// srun --mpi=pmix). An executor that is its child also watches it as its
// parent (ParentWatch.h); the lost connection tells the same where it is
// not the child, as when started through a shell that outlives mpirun.
//
// PMIx cannot take a value back: on a stop the executor only finalizes
// PMIx, after its sockets are closed; hosts notice the executor is gone by
// its sessions. PMIx runs a progress thread from announceThroughPmix() to
// endPmixAnnouncement(); connection processes forked meanwhile never call
// PMIx. Neither function may run in a signal handler.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_PMIXANNOUNCEMENT_H
#define CATALYST_REMOTE_EXECUTOR_PMIXANNOUNCEMENT_H

#include "Listener.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace catalyst::remote::executor {

// Initializes PMIx and publishes the reachable address of the first
// listener (Announcement.h's reachableAddress). Fails, saying so, when the
// executor was not started by a PMIx launcher or was built without PMIx.
// With WakeOnServerLoss a descriptor (not -1), a byte is written to it,
// from PMIx's progress thread, once the connection to the PMIx server is
// lost, and pmixServerLost() is true from then on.
llvm::Error announceThroughPmix(const std::vector<Listener> &Listeners, int WakeOnServerLoss);

// Whether the PMIx server announceThroughPmix() connected to is gone.
// Safe from any thread.
bool pmixServerLost();

// Finalizes PMIx if announceThroughPmix() initialized it.
void endPmixAnnouncement();

} // namespace catalyst::remote::executor

#endif
