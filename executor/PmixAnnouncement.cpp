//===- PmixAnnouncement.cpp - Telling hosts of the job through PMIx -------===//

#include "PmixAnnouncement.h"

#include "Announcement.h"
#include "wire/PmixKey.h"

#include <atomic>
#include <unistd.h>

#if CATALYST_REMOTE_HAVE_PMIX
#include <pmix.h>
#endif

using namespace llvm;

namespace catalyst::remote::executor {

#if CATALYST_REMOTE_HAVE_PMIX

namespace {

bool Initialized = false; // the listener's thread only

// Set by PMIx's progress thread when the connection to the server is
// lost, read by the listener's thread; WakeFd (set before the handler is
// registered, never changed after) wakes the listener's poll.
std::atomic<bool> ServerLost{false};
int WakeFd = -1;

Error pmixError(const Twine &What, pmix_status_t Rc) {
  return createStringError(inconvertibleErrorCode(),
                           "--announce pmix: " + What + ": " + PMIx_Error_string(Rc));
}

// Runs on PMIx's progress thread.
void onLostConnection(size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t[], size_t,
                      pmix_info_t[], size_t, pmix_event_notification_cbfunc_fn_t Done,
                      void *DoneData) {
  ServerLost.store(true, std::memory_order_release);
  // A full pipe already holds a wake-up: the write may fail harmlessly.
  [[maybe_unused]] ssize_t N = ::write(WakeFd, "p", 1);
  if (Done)
    Done(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, DoneData);
}

// Asks PMIx to call onLostConnection() when the server goes.
Error watchServer(int Wake) {
  WakeFd = Wake;
  pmix_status_t Code = PMIX_ERR_LOST_CONNECTION;
  // PMIx answers through the callback on its progress thread; with no
  // callback given the call blocks until registered and returns the
  // handler's reference, or an error.
  pmix_status_t Rc =
      PMIx_Register_event_handler(&Code, 1, nullptr, 0, onLostConnection, nullptr, nullptr);
  if (Rc < 0)
    return pmixError("cannot watch the PMIx server (PMIx_Register_event_handler)", Rc);
  return Error::success();
}

} // namespace

bool pmixServerLost() {
  return ServerLost.load(std::memory_order_acquire);
}

Error announceThroughPmix(const std::vector<Listener> &Listeners, int WakeOnServerLoss) {
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
  if (WakeOnServerLoss >= 0)
    if (Error Err = watchServer(WakeOnServerLoss))
      return Err;
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

bool pmixServerLost() {
  return false;
}

Error announceThroughPmix(const std::vector<Listener> &, int) {
  return createStringError(inconvertibleErrorCode(),
                           "--announce pmix: this executor was built without PMIx (Debian: "
                           "libpmix-dev); use --announce DIR");
}

void endPmixAnnouncement() {}

#endif

} // namespace catalyst::remote::executor
