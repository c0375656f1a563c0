//===- Connection.cpp - Serving one host over one socket ------------------===//

#include "Connection.h"

#include "../engine/wire/Handshake.h"
#include "../engine/wire/SocketTransport.h"
#include "../engine/wire/UnixSocket.h"
#include "Assets.h"
#include "BudgetedMemoryManager.h"
#include "CrashReporter.h"
#include "Heartbeat.h"
#include "Log.h"
#include "MemoryBudget.h"
#include "Retention.h"
#include "SharedSlabs.h"
#include "WorkerPool.h"
#include "ZeroCopyService.h"

#include "llvm/ExecutionEngine/Orc/TargetProcess/DefaultHostBootstrapValues.h"
#include "llvm/ExecutionEngine/Orc/TargetProcess/SimpleRemoteEPCServer.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <csignal>
#include <dlfcn.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::executor {

namespace {

// Catalyst's runtime, when a plugin brought it, wants a fresh context per
// connection.
void runRuntimeHook(const char *Name) {
  if (void *Fn = ::dlsym(RTLD_DEFAULT, Name)) {
    if (StringRef(Name).ends_with("initialize"))
      reinterpret_cast<void (*)(uint32_t *)>(Fn)(nullptr);
    else
      reinterpret_cast<void (*)()>(Fn)();
  }
}

Error setup(SimpleRemoteEPCServer::Setup &S, const ConnectionOptions &Options) {
  S.setDispatcher(std::make_unique<WorkerPool>(Options.Workers));
  S.bootstrapSymbols() = SimpleRemoteEPCServer::defaultBootstrapSymbols();
  addDefaultBootstrapValuesForHostProcess(S.bootstrapMap(), S.bootstrapSymbols());
  S.services().push_back(std::make_unique<BudgetedMemoryManager>());
  addServices(S.bootstrapSymbols(), S.bootstrapMap(), Options.Services);
  return Error::success();
}

int ConnectionFd = -1;

// SIGTERM (the executor stopping) ends the session like a hangup would, so
// the runtime is finalized and the assets are removed on the way out; so
// does SIGHUP (the ssh session the executor was started in closing).
void onTerminate(int) {
  Heartbeat::noteStopping();
  ::shutdown(ConnectionFd, SHUT_RDWR);
}

void endOnTerminate(int Fd) {
  ConnectionFd = Fd;
  struct sigaction SA {};
  SA.sa_handler = onTerminate;
  sigemptyset(&SA.sa_mask);
  ::sigaction(SIGTERM, &SA, nullptr);
  ::sigaction(SIGHUP, &SA, nullptr);
}

} // namespace

int serveConnection(int Fd, const std::string &Peer, const ConnectionOptions &Given,
                    const wire::Nonce &Challenge, ConnectionRecord &Record) {
  ConnectionOptions Options = Given;
  // A host on the local socket is where the offer leads.
  bool Local = wire::isUnixSocket(Fd);
  if (Local)
    Options.Services.LocalOffer.clear();
  std::string Label = "catalyst-remote-executor[" + std::to_string(::getpid()) + "] " + Peer;
  endOnTerminate(Fd);
  bool Authenticate = !Options.Secret.empty();
  if (Authenticate) {
    auto By = std::chrono::steady_clock::now() + Options.HandshakeTimeout;
    if (auto Err = wire::authenticateHost(Fd, Options.Secret.reveal(), Challenge, By)) {
      LogLine() << Label << ": refused: " << toString(std::move(Err));
      Record.Ended = true;
      ::close(Fd);
      return 1;
    }
  }
  // Kernels run in this process from now on: they do not find the secret
  // in its memory. (This wipes the listener's bytes as this process sees
  // them, not the listener's own.)
  Options.Secret.wipeNow();
  // Once the host proved itself, and while the process has one thread (this
  // sets the environment). Kernels that need no assets run without it.
  if (auto Err = createAssetDirectory())
    LogLine() << Label << ": " << toString(std::move(Err));
  MemoryBudget::get().setCap(Options.MaxReservedBytes);
  if (auto Err = retainFreedMemory(Options.RetainedBytes))
    LogLine() << Label << ": " << toString(std::move(Err)) << "; kernels' memory is not kept";
  wire::SocketTransport *Transport = nullptr;
  wire::TransportOptions TOpts;
  TOpts.MaxMessageSize = Options.MaxMessageSize;
  TOpts.Mark = &Record.Sending;
  if (Local)
    TOpts.Spin = wire::localSpin();
  // Without a secret, a peer that never speaks is dropped, and nothing is
  // set up for it but the EPC server itself.
  if (!Authenticate)
    TOpts.FirstMessageTimeout = Options.HandshakeTimeout;
  std::atomic<bool> Initialized{false};
  TOpts.OnFirstMessage = [&Initialized] {
    runRuntimeHook("__catalyst__rt__initialize");
    Initialized = true;
  };
  // Before the first message is read: a fast host may launch right after
  // the handshake, and a kernel may crash in the first one.
  TOpts.OnReaderStart = [&Transport, &Options, Local] {
    prepareThreadForCrashes();
    armCrashReporter(*Transport);
    Heartbeat::get().attach(*Transport);
    if (!Options.Services.UpstreamOnly)
      ZeroCopyService::get().attach(*Transport);
    if (!Options.Services.UpstreamOnly && Local)
      SharedSlabs::get().attach(*Transport);
  };
  auto Server = SimpleRemoteEPCServer::Create<wire::SocketTransport>(
      [&](SimpleRemoteEPCServer::Setup &S) { return setup(S, Options); }, Fd, TOpts, &Transport);
  int Status = 0;
  if (!Server) {
    LogLine() << Label << ": setup failed: " << toString(Server.takeError());
    Status = 1;
  } else {
    (*Server)->setErrorReporter(
        [&](Error Err) { LogLine() << Label << ": " << toString(std::move(Err)); });
    if (auto Err = (*Server)->waitForDisconnect()) {
      LogLine() << Label << ": session ended with an error: " << toString(std::move(Err));
      Status = 1;
    }
  }
  Record.Ended = true;
  if (Initialized)
    runRuntimeHook("__catalyst__rt__finalize");
  removeAssets();
  ConnectionFd = -1;
  return Status;
}

} // namespace catalyst::remote::executor
