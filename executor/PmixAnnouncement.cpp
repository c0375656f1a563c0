//===- PmixAnnouncement.cpp - Telling hosts of the job through PMIx -------===//

#include "PmixAnnouncement.h"

#include "Announcement.h"
#include "wire/PmixKey.h"

#if CATALYST_REMOTE_HAVE_PMIX
#include <pmix.h>
#endif

using namespace llvm;

namespace catalyst::remote::executor {

#if CATALYST_REMOTE_HAVE_PMIX

namespace {

bool Initialized = false; // the listener's thread only

Error pmixError(const Twine &What, pmix_status_t Rc) {
  return createStringError(inconvertibleErrorCode(),
                           "--announce pmix: " + What + ": " + PMIx_Error_string(Rc));
}

} // namespace

Error announceThroughPmix(const std::vector<Listener> &Listeners) {
  if (Listeners.empty())
    return createStringError(inconvertibleErrorCode(), "--announce pmix: nothing to announce");
  std::string Address = reachableAddress(Listeners.front());
  if (Address.size() > wire::MaxPmixAddress)
    return createStringError(inconvertibleErrorCode(), "--announce pmix: address too long: %s",
                             Address.c_str());
  pmix_proc_t Me;
  if (pmix_status_t Rc = PMIx_Init(&Me, nullptr, 0); Rc != PMIX_SUCCESS)
    return pmixError("this executor was not started by a PMIx launcher (mpirun, srun "
                     "--mpi=pmix); use --announce DIR otherwise. PMIx_Init",
                     Rc);
  Initialized = true;
  pmix_value_t Value;
  PMIX_VALUE_LOAD(&Value, Address.c_str(), PMIX_STRING);
  pmix_status_t Rc = PMIx_Put(PMIX_GLOBAL, wire::PmixAddressKey, &Value);
  PMIX_VALUE_DESTRUCT(&Value);
  if (Rc != PMIX_SUCCESS)
    return pmixError("PMIx_Put", Rc);
  // No fence: hosts fetch the value per rank when they want it (direct
  // modex), and a fence would wait for every rank of the job.
  if (Rc = PMIx_Commit(); Rc != PMIX_SUCCESS)
    return pmixError("PMIx_Commit", Rc);
  return Error::success();
}

void endPmixAnnouncement() {
  if (!Initialized)
    return;
  Initialized = false;
  PMIx_Finalize(nullptr, 0);
}

#else

Error announceThroughPmix(const std::vector<Listener> &) {
  return createStringError(inconvertibleErrorCode(),
                           "--announce pmix: this executor was built without PMIx (Debian: "
                           "libpmix-dev); use --announce DIR");
}

void endPmixAnnouncement() {}

#endif

} // namespace catalyst::remote::executor
