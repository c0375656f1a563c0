//===- Listener.h - Accepting hosts, one process per connection -*- C++ -*-===//
//
// The executor's main process only listens and forks: each connection is
// served in its own child, so a crashing kernel ends only its own session.
// SIGINT, SIGTERM and SIGHUP (an ssh session that started it closing) stop
// it, and so does the end of its launcher when it watches it (--with-parent): the announcement goes
// and the listening sockets close at once, so no new host is served; the connection processes
// finish the launches they run, send their results and end, and those still running after the stop
// grace are killed.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_LISTENER_H
#define CATALYST_REMOTE_EXECUTOR_LISTENER_H

#include "Connection.h"
#include "Startups.h"
#include "wire/SocketFile.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace catalyst::remote::executor {

struct Listener {
  int Fd = -1;
  std::string Address;   // as bound, with the port the kernel chose
  wire::SocketFile File; // unix:PATH only: to remove once the executor stops
};

// Binds "PORT", ":PORT" (both on 127.0.0.1), "HOST:PORT" or "[v6addr]:PORT",
// or listens at "unix:PATH" (wire/SocketFile.h).
llvm::Expected<Listener> listenOn(llvm::StringRef Spec);

// True when the listener accepts only from this machine (127.0.0.0/8, ::1,
// a socket file).
bool isLoopback(const Listener &L);

struct ServeOptions {
  ConnectionOptions Connection;
  // Sessions served at once, over TCP and the local socket together; more
  // are refused with a message saying so. Peers that have not
  // authenticated yet (without a token: not sent their first message) do
  // not count: Startups does.
  unsigned MaxConnections = 64;
  // The budget of peers that have not authenticated yet (Startups.h).
  StartupLimits Startups;
  // Also listen on an abstract Unix socket and offer it, with shared
  // memory, to hosts on this machine (wire/LocalOffer.h).
  bool LocalSocket = true;
  // Where to announce the address once listening (Announcement.h); empty:
  // nowhere.
  std::string AnnounceDir;
  // Announce it through PMIx instead (PmixAnnouncement.h).
  bool AnnouncePmix = false;
  // Stop once no session nor peer has been served for this long (zero:
  // never), as a stop signal would.
  std::chrono::milliseconds IdleExit{0};
  // On a stop, how long connection processes get to finish the launches
  // they run and end, before they are killed. Within the 10 s Catalyst's
  // launcher waits before it SIGKILLs the executor (which would leave the
  // asset directory behind), and Slurm's default KillWait of 30 s.
  std::chrono::milliseconds StopGrace{5000};
  // Stop, as a stop signal would, once this process (the executor's
  // parent at its start: its launcher) has ended (ParentWatch.h); zero:
  // never.
  pid_t WatchParent = 0;
  // Stop, as a stop signal would, once the srun of this process's Slurm
  // step has ended, when it runs on this machine (SrunWatch.h).
  bool WatchSrun = false;
  // With AnnouncePmix: stop, as a stop signal would, once the connection
  // to the PMIx server is lost (PmixAnnouncement.h).
  bool WatchPmixServer = false;
};

// Once it is ready to serve, prints on stdout, for each listener,
// "catalyst-remote-executor: listening on ADDRESS" and then
// "Listening on ADDRESS": the line Catalyst's launcher waits for (it matches
// `Listening on \S+:\d+`, which "unix:PATH" need not: the launcher binds
// TCP only). Serves until a stop signal; returns the exit status. Socket
// files are left for the caller to remove (wire::removeSocketFile).
int serve(std::vector<Listener> Listeners, const ServeOptions &Options);

} // namespace catalyst::remote::executor

#endif
