//===- main.cpp - catalyst-remote-executor --------------------------------===//
//
// catalyst-remote-executor --bind HOST:PORT|unix:PATH [--bind ...] [options]
//
//===----------------------------------------------------------------------===//

#include "Listener.h"
#include "ParentWatch.h"
#include "TokenSource.h"
#include "wire/Protocol.h"
#include "wire/Secret.h"
#include "wire/TlsStream.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <mimalloc.h>
#include <openssl/crypto.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace llvm;
using namespace catalyst::remote;
using namespace catalyst::remote::executor;

namespace {

const char *Usage =
    "usage: catalyst-remote-executor --bind HOST:PORT|unix:PATH [--bind ...] [options]\n"
    "       catalyst-remote-executor --new-token PATH\n"
    "\n"
    "Serves catalyst-remote hosts over ORC EPC, one process per connection. A host\n"
    "that connects can run any code as this executor's user: outside loopback,\n"
    "require a secret (--token-file). Options take '--flag VALUE' or '--flag=VALUE'.\n"
    "  --bind HOST:PORT         listen here; a bare PORT binds 127.0.0.1; port 0 lets\n"
    "                           the kernel choose. Once ready, stdout gets for each\n"
    "                           address 'Listening on HOST:PORT' (what Catalyst's\n"
    "                           launcher waits for); a port in use is an error\n"
    "                           naming it ('Address already in use', exit status 1)\n"
    "  --bind unix:PATH         listen at a socket file (mode 0600, removed at exit) in\n"
    "                           a directory only this user (or root) may write to;\n"
    "                           serves only processes of this user\n"
    "  --token-file PATH        every host must prove it knows the secret in PATH (mode\n"
    "                           0600 or stricter), loopback included; the executor\n"
    "                           proves it knows it too. Without it, the secret comes\n"
    "                           from the environment as for hosts:\n"
    "                           CATALYST_REMOTE_TOKEN_FILE=PATH (the same checks), else\n"
    "                           CATALYST_REMOTE_TOKEN=SECRET (removed from the\n"
    "                           environment at once); srun passes them on, mpirun\n"
    "                           needs -x NAME. The log names the source used\n"
    "  --new-token PATH         write a fresh 256-bit secret to PATH (mode 0600) and exit\n"
    "  --version                print the release and wire protocol version and exit\n"
    "  --announce DIR           once listening, write DIR/<job>.<step>.<rank>.addr (from\n"
    "                           Slurm's or MPI's variables, else <host>.<pid>.addr)\n"
    "                           holding the first --bind's address as hosts dial it;\n"
    "                           removed first thing when the executor stops\n"
    "  --announce pmix          started by a PMIx launcher (mpirun, srun --mpi=pmix) in\n"
    "                           the host's job: publish that address through PMIx\n"
    "                           (key catalyst-remote.address) for pool:pmix\n"
    "  --idle-exit S            stop after S seconds without a session (default: never)\n"
    "  --with-parent            stop, as on SIGTERM, once the process that started it\n"
    "                           has ended (a launcher killed with SIGKILL tells nobody),\n"
    "                           or the srun of its step, where srun runs on this machine;\n"
    "                           the default under Slurm, Open MPI or PMIx and with\n"
    "                           --announce\n"
    "  --detach                 keep running when the process that started it ends\n"
    "                           (the default otherwise: a daemon started from a shell)\n"
    "  --stop-grace S           on SIGTERM (SIGINT, SIGHUP) stop taking hosts at once, let\n"
    "                           running launches finish and send their results for up\n"
    "                           to S seconds, then kill what still runs (default 5: within\n"
    "                           Catalyst's launcher's 10 s and Slurm's KillWait, 30 s by\n"
    "                           default; Open MPI's mpirun SIGKILLs every rank 1 s after\n"
    "                           SIGTERM whatever S is)\n"
    "  --wire tls|plain         what carries TCP sessions once the host proved itself:\n"
    "                           TLS 1.3 keyed by the token, or plain bytes (default tls\n"
    "                           with --token-file, else plain). Socket files and the\n"
    "                           local socket are always plain; hosts must agree\n"
    "  --allow-unauthenticated  listen beyond loopback without --token-file (warns)\n"
    "  --max-connections N      sessions served at once; more are refused (default 64).\n"
    "                           Peers not yet authenticated (without a token: that have\n"
    "                           not sent their first message) do not count\n"
    "  --max-startups S:R:F     peers not yet authenticated: from S on, a new one is\n"
    "                           dropped with probability R%, rising to 100% at F\n"
    "                           (default 100:30:1000 with a token, else 10:30:100)\n"
    "  --max-startups-per-source N\n"
    "                           peers not yet authenticated from one address (default 20)\n"
    "  --handshake-timeout S    seconds a peer has to authenticate, or without a token to\n"
    "                           send its whole first message, before it is dropped\n"
    "                           (default 10); the TLS handshake that follows gets as\n"
    "                           long again\n"
    "  --max-slab-mib MIB       executor memory (code, launch slabs and resident\n"
    "                           tensors) one host may reserve (default 16384)\n"
    "  --max-resident-mib MIB   of it, what one host may keep as resident tensors\n"
    "                           (default 8192)\n"
    "  --max-message MIB        largest message accepted from a host (default 8192)\n"
    "  --retain-mib MIB         memory each connection keeps faulted in for its kernels'\n"
    "                           next large allocations, once freed (default 1024; 0: none)\n"
    "  --workers N              threads serving each connection (default 4)\n"
    "  --plugin PATH            dlopen a shared library (RTLD_GLOBAL) before serving;\n"
    "                           may be repeated\n"
    "  --upstream-only          offer only Catalyst's upstream services, for Catalyst's\n"
    "                           own host: plain, on loopback or socket files only\n"
    "  --no-shared-memory       serve TCP only: do not offer hosts on this machine the\n"
    "                           local socket and shared memory\n";

struct Args {
  std::vector<std::string> Binds, Plugins;
  std::string TokenFile, NewToken, MaxStartups, Wire;
  unsigned PerSource = 0;
  bool AllowUnauthenticated = false;
  ParentPolicy Parent = ParentPolicy::Auto;
  ServeOptions Serve;
};

// Set once the secret is read (takeToken), before the checks that ask.
bool hasToken(const Args &A) {
  return !A.Serve.Connection.Secret.empty();
}

bool parseCount(StringRef Text, unsigned Max, unsigned &Out) {
  return !Text.getAsInteger(10, Out) && Out > 0 && Out <= Max;
}

// A size in MiB, up to 2^40 MiB, so that the byte count cannot overflow.
bool parseMiB(StringRef Text, uint64_t &Bytes, bool ZeroMeansNone = false) {
  uint64_t MiB = 0;
  if (Text.getAsInteger(10, MiB) || (MiB == 0 && !ZeroMeansNone) || MiB > (uint64_t(1) << 40))
    return false;
  Bytes = MiB << 20;
  return true;
}

bool parseSeconds(StringRef Text, std::chrono::milliseconds &Out) {
  double S = 0;
  if (Text.getAsDouble(S) || !std::isfinite(S) || S <= 0 || S > 86400)
    return false;
  Out = std::chrono::milliseconds(std::max<int64_t>(1, std::llround(S * 1000)));
  return true;
}

// Options that take a value; each setter says whether the value fits.
using Setter = bool (*)(StringRef Value, Args &A);
const std::pair<StringRef, Setter> ValueOptions[] = {
    {"--bind",
     [](StringRef V, Args &A) {
       A.Binds.push_back(V.str());
       return true;
     }},
    {"--plugin",
     [](StringRef V, Args &A) {
       // dlopen("") would hand back the executor itself and load nothing.
       A.Plugins.push_back(V.str());
       return !V.empty();
     }},
    {"--token-file",
     [](StringRef V, Args &A) {
       A.TokenFile = V.str();
       return !V.empty();
     }},
    {"--new-token",
     [](StringRef V, Args &A) {
       A.NewToken = V.str();
       return !V.empty();
     }},
    {"--announce",
     [](StringRef V, Args &A) {
       A.Serve.AnnouncePmix = V == "pmix";
       A.Serve.AnnounceDir = A.Serve.AnnouncePmix ? "" : V.str();
       return !V.empty();
     }},
    {"--idle-exit", [](StringRef V, Args &A) { return parseSeconds(V, A.Serve.IdleExit); }},
    {"--stop-grace", [](StringRef V, Args &A) { return parseSeconds(V, A.Serve.StopGrace); }},
    {"--wire",
     [](StringRef V, Args &A) {
       A.Wire = V.str();
       return V == "tls" || V == "plain";
     }},
    {"--handshake-timeout",
     [](StringRef V, Args &A) { return parseSeconds(V, A.Serve.Connection.HandshakeTimeout); }},
    {"--max-message",
     [](StringRef V, Args &A) { return parseMiB(V, A.Serve.Connection.MaxMessageSize); }},
    {"--max-slab-mib",
     [](StringRef V, Args &A) { return parseMiB(V, A.Serve.Connection.MaxReservedBytes); }},
    {"--max-resident-mib",
     [](StringRef V, Args &A) { return parseMiB(V, A.Serve.Connection.MaxResidentBytes); }},
    {"--retain-mib",
     [](StringRef V, Args &A) { return parseMiB(V, A.Serve.Connection.RetainedBytes, true); }},
    {"--workers",
     [](StringRef V, Args &A) { return parseCount(V, 1024, A.Serve.Connection.Workers); }},
    {"--max-connections",
     [](StringRef V, Args &A) { return parseCount(V, 1 << 20, A.Serve.MaxConnections); }},
    {"--max-startups",
     [](StringRef V, Args &A) {
       A.MaxStartups = V.str();
       return !V.empty();
     }},
    {"--max-startups-per-source",
     [](StringRef V, Args &A) { return parseCount(V, 1 << 20, A.PerSource); }},
};

bool badArgument(StringRef Arg, const char *Why) {
  errs() << "catalyst-remote-executor: " << Why << " '" << Arg << "'\n" << Usage;
  return false;
}

// Returns false (after saying why) when the command line is unusable.
bool parse(int Argc, char **Argv, Args &A) {
  for (int I = 1; I < Argc; ++I) {
    StringRef Arg = Argv[I];
    auto [Flag, Inline] = Arg.split('=');
    bool HasInline = Arg.contains('=');
    if (!HasInline && Flag == "--upstream-only") {
      A.Serve.Connection.Services.UpstreamOnly = true;
      continue;
    }
    if (!HasInline && Flag == "--no-shared-memory") {
      A.Serve.LocalSocket = false;
      continue;
    }
    if (!HasInline && (Flag == "--with-parent" || Flag == "--detach")) {
      auto Asked = Flag == "--detach" ? ParentPolicy::Detach : ParentPolicy::WithParent;
      if (A.Parent != ParentPolicy::Auto && A.Parent != Asked)
        return badArgument(Arg, "--with-parent and --detach exclude each other:");
      A.Parent = Asked;
      continue;
    }
    if (!HasInline && Flag == "--allow-unauthenticated") {
      A.AllowUnauthenticated = true;
      continue;
    }
    if (!HasInline && Flag == "--version") {
      std::printf("catalyst-remote-executor %s, protocol %u\n", CATALYST_REMOTE_VERSION,
                  unsigned(wire::ProtocolVersion));
      std::exit(0);
    }
    if (!HasInline && (Flag == "--help" || Flag == "-h")) {
      std::fputs(Usage, stdout);
      std::exit(0);
    }
    // Not echoed: its value would be the secret.
    if (Flag == "--token") {
      errs() << "catalyst-remote-executor: --token is refused: a secret on the command line is "
                "one every local user can read (ps, /proc/PID/cmdline); write it to a file only "
                "you can read and pass --token-file PATH\n";
      return false;
    }
    const auto *Option = llvm::find_if(ValueOptions, [&](auto &O) { return O.first == Flag; });
    if (Option == std::end(ValueOptions))
      return badArgument(Arg, "bad argument");
    if (!HasInline && I + 1 >= Argc)
      return badArgument(Arg, "missing value for");
    StringRef Value = HasInline ? Inline : StringRef(Argv[++I]);
    if (!Option->second(Value, A))
      return badArgument((Flag + " " + Value).str(), "bad value in");
  }
  if (A.Binds.empty() && A.NewToken.empty())
    errs() << "catalyst-remote-executor: at least one --bind is required\n" << Usage;
  return !A.Binds.empty() || !A.NewToken.empty();
}

bool loadPlugins(const std::vector<std::string> &Plugins) {
  for (const auto &P : Plugins) {
    if (!::dlopen(P.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      errs() << "catalyst-remote-executor: cannot load plugin " << P << ": " << ::dlerror() << "\n";
      return false;
    }
  }
  return true;
}

// Kernels' allocations should come from mimalloc, which replaces malloc
// when linked first; say so when something else (LD_PRELOAD) won.
void checkAllocator() {
  void *P = std::malloc(16);
  bool Ours = mi_is_in_heap_region(P);
  std::free(P);
  if (!Ours)
    errs() << "catalyst-remote-executor: warning: malloc is not mimalloc's\n";
}

// Without a secret, anyone who reaches a port runs code as this user:
// beyond loopback that takes a decision the operator stated.
bool checkExposure(const std::vector<Listener> &Listeners, const Args &A) {
  if (A.Serve.Connection.Services.UpstreamOnly)
    for (const Listener &L : Listeners)
      if (!isLoopback(L) && !StringRef(L.Address).starts_with("unix:")) {
        errs() << "catalyst-remote-executor: refusing to listen on " << L.Address
               << " with --upstream-only: it serves Catalyst's own host, whose sessions are "
                  "plain, so it listens on loopback or a socket file only (reach it from "
                  "elsewhere through ssh)\n";
        return false;
      }
  if (hasToken(A))
    return true;
  for (const Listener &L : Listeners) {
    if (isLoopback(L))
      continue;
    if (A.AllowUnauthenticated) {
      errs() << "catalyst-remote-executor: warning: " << L.Address
             << " is reachable from other machines and asks no secret: anyone who can reach "
                "it can run code as this user\n";
      continue;
    }
    errs() << "catalyst-remote-executor: refusing to listen on " << L.Address
           << " without authentication: anyone who could reach it could run code as this "
              "user. Create a secret with 'catalyst-remote-executor --new-token PATH', start "
              "with --token-file PATH and give hosts the same file "
              "(CATALYST_REMOTE_TOKEN_FILE=PATH, which the executor reads too); or pass "
              "--allow-unauthenticated to accept "
              "the risk\n";
    return false;
  }
  return true;
}

// What carries TCP sessions: given, or TLS when a token keys it. Catalyst's
// own host speaks plain EPC, so --upstream-only serves plain.
bool wireMode(Args &A) {
  bool Token = hasToken(A);
  bool Upstream = A.Serve.Connection.Services.UpstreamOnly;
  auto &Wire = A.Serve.Connection.Wire;
  Wire = A.Wire == "tls" || (A.Wire.empty() && Token && !Upstream) ? wire::WireMode::Tls
                                                                   : wire::WireMode::Plain;
  if (Wire == wire::WireMode::Tls && !Token) {
    errs() << "catalyst-remote-executor: --wire tls needs a token (--token-file, "
              "CATALYST_REMOTE_TOKEN_FILE or CATALYST_REMOTE_TOKEN): TLS is keyed by it\n";
    return false;
  }
  if (Wire == wire::WireMode::Tls && Upstream) {
    errs() << "catalyst-remote-executor: --wire tls cannot go with --upstream-only: Catalyst's "
              "own host speaks plain EPC\n";
    return false;
  }
  if (Wire == wire::WireMode::Tls)
    if (auto Err = wire::prepareTls()) {
      errs() << "catalyst-remote-executor: " << toString(std::move(Err)) << "\n";
      return false;
    }
  return true;
}

// After authenticating, a plain session is anyone's who sits on its path.
void warnPlainOverNetwork(const std::vector<Listener> &Listeners, const Args &A) {
  if (!hasToken(A) || A.Serve.Connection.Wire != wire::WireMode::Plain)
    return;
  for (const Listener &L : Listeners)
    if (!isLoopback(L) && !StringRef(L.Address).starts_with("unix:"))
      errs() << "catalyst-remote-executor: warning: sessions on " << L.Address
             << " are plain after the handshake (--wire plain): whoever relays the connection "
                "can read them and run code in them\n";
}

// The budget of peers not yet authenticated: given, or the default for
// whether a token is set.
bool startupLimits(Args &A) {
  StartupLimits &L = A.Serve.Startups;
  L = StartupLimits::defaultsFor(hasToken(A));
  if (!A.MaxStartups.empty())
    if (auto Err = StartupLimits::parse(A.MaxStartups, L)) {
      errs() << "catalyst-remote-executor: " << toString(std::move(Err)) << "\n" << Usage;
      return false;
    }
  if (A.PerSource)
    L.PerSource = A.PerSource;
  return true;
}

int newToken(StringRef Path) {
  if (auto Err = wire::writeNewTokenFile(Path)) {
    errs() << "catalyst-remote-executor: " << toString(std::move(Err)) << "\n";
    return 1;
  }
  std::printf("catalyst-remote-executor: wrote a new secret to %s (mode 0600)\n",
              Path.str().c_str());
  return 0;
}

// Reads the secret from where TokenSource.h says and says which source
// that was (never the secret); false, after saying why, when it cannot.
bool takeToken(Args &A, EnvironmentSecret FromEnv) {
  auto Token = chooseToken(A.TokenFile, std::move(FromEnv));
  if (!Token) {
    errs() << "catalyst-remote-executor: " << toString(Token.takeError()) << "\n";
    return false;
  }
  if (Token->Origin.empty())
    return true;
  errs() << "catalyst-remote-executor: hosts must prove they know the secret from " << Token->Origin
         << "\n";
  if (unsigned Bits = wire::secretBitsAtMost(Token->Secret.reveal()); Bits < wire::StrongSecretBits)
    errs() << "catalyst-remote-executor: warning: the secret in " << Token->Where << " has at most "
           << Bits << " bits, fewer than " << wire::StrongSecretBits
           << ": one recorded handshake lets it be guessed offline "
              "(--new-token PATH writes a 256-bit one)\n";
  A.Serve.Connection.Secret = std::move(Token->Secret);
  if (auto Err = wire::prepareCrypto()) {
    errs() << "catalyst-remote-executor: " << toString(std::move(Err)) << "\n";
    return false;
  }
  return true;
}

void removeSocketFiles(const std::vector<Listener> &Listeners) {
  for (const Listener &L : Listeners)
    wire::removeSocketFile(L.File);
}

// Binds every --bind; on a failure, says why and leaves no socket file.
bool listenAll(const std::vector<std::string> &Binds, std::vector<Listener> &Listeners) {
  for (const auto &B : Binds) {
    auto L = listenOn(B);
    if (!L) {
      errs() << "catalyst-remote-executor: " << toString(L.takeError()) << "\n";
      removeSocketFiles(Listeners);
      return false;
    }
    Listeners.push_back(*L);
  }
  return true;
}

// Whom to end with (ServeOptions::WatchParent): the launcher, when one
// started this process or it announces itself for hosts to find (an
// executor nobody stops would go on being found). Parent is getppid() at
// start; 1 means no launcher is left to watch.
pid_t parentToWatch(const Args &A, pid_t Parent) {
  bool Watch = A.Parent == ParentPolicy::WithParent ||
               (A.Parent == ParentPolicy::Auto &&
                (launchedByLauncher() || A.Serve.AnnouncePmix || !A.Serve.AnnounceDir.empty()));
  return Watch && Parent > 1 ? Parent : 0;
}

} // namespace

int main(int Argc, char **Argv) {
  // First: the launcher may already be ending.
  const pid_t Parent = ::getppid();
  // Before anything else: a secret in the environment must not outlive
  // this line there (TokenSource.h).
  EnvironmentSecret EnvSecret = takeSecretFromEnvironment();
  Args A;
  if (!parse(Argc, Argv, A))
    return 2;
  A.Serve.WatchParent = parentToWatch(A, Parent);
  A.Serve.WatchSrun = A.Parent != ParentPolicy::Detach && launchedByLauncher();
  A.Serve.WatchPmixServer = A.Parent != ParentPolicy::Detach;
  if (!A.NewToken.empty())
    return newToken(A.NewToken);
  if (!takeToken(A, std::move(EnvSecret)))
    return 2;
  if (!startupLimits(A) || !wireMode(A))
    return 2;
  if (!loadPlugins(A.Plugins))
    return 2;
  // Cannot fail: SIGPIPE may be ignored.
  std::signal(SIGPIPE, SIG_IGN);
  checkAllocator();
  std::vector<Listener> Listeners;
  if (!listenAll(A.Binds, Listeners))
    return 1;
  warnPlainOverNetwork(Listeners, A);
  int Status = checkExposure(Listeners, A) ? serve(Listeners, A.Serve) : 2;
  // Connection processes end in _exit: only this one gets here.
  removeSocketFiles(Listeners);
  return Status;
}
