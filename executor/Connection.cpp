//===- Connection.cpp - Serving one host over one socket ------------------===//

#include "Connection.h"

#include "Assets.h"
#include "BudgetedMemoryManager.h"
#include "ConnectionServices.h"
#include "CrashReporter.h"
#include "Heartbeat.h"
#include "Log.h"
#include "Retention.h"
#include "TransportHandoff.h"
#include "WorkerPool.h"
#include "wire/SocketFile.h"
#include "wire/SocketTransport.h"
#include "wire/UnixSocket.h"

#include "llvm/ExecutionEngine/Orc/TargetProcess/DefaultHostBootstrapValues.h"
#include "llvm/ExecutionEngine/Orc/TargetProcess/SimpleRemoteEPCServer.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <csignal>
#include <dlfcn.h>
#include <openssl/crypto.h>
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

Error setup(SimpleRemoteEPCServer::Setup &S, const ConnectionOptions &Options,
            ConnectionServices &Connection) {
  S.setDispatcher(std::make_unique<WorkerPool>(Options.Workers));
  S.bootstrapSymbols() = SimpleRemoteEPCServer::defaultBootstrapSymbols();
  addDefaultBootstrapValuesForHostProcess(S.bootstrapMap(), S.bootstrapSymbols());
  S.services().push_back(std::make_unique<BudgetedMemoryManager>(Connection.budget()));
  addServices(S.bootstrapSymbols(), S.bootstrapMap(), Options.Services, Connection);
  return Error::success();
}

int ConnectionFd = -1;

// SIGTERM (the executor stopping: its listener, or a cluster's launcher
// ending the job) ends the session like a hangup would, so the runtime is
// finalized and the assets are removed on the way out; so does SIGHUP (the
// ssh session the executor was started in closing). A launch running then
// finishes first and its result goes out: the listener kills what is
// still running when its --stop-grace is over. A request that arrives in
// the meantime may be served too, or find the session closed.
void onTerminate(int) {
  Heartbeat::stopWhenIdle(ConnectionFd);
}

void endOnTerminate(int Fd) {
  ConnectionFd = Fd;
  struct sigaction SA {};
  SA.sa_handler = onTerminate;
  sigemptyset(&SA.sa_mask);
  // Cannot fail: a valid handler for signals a process may catch.
  ::sigaction(SIGTERM, &SA, nullptr);
  ::sigaction(SIGHUP, &SA, nullptr);
}

// The session's TLS stream, once the host completed TLS with the key both
// derived; the key is wiped either way.
Expected<std::unique_ptr<wire::TlsStream>> acceptTls(int Fd, ConnectionWire &Wire,
                                                     std::chrono::milliseconds Timeout) {
  auto By = std::chrono::steady_clock::now() + Timeout;
  auto Tls = wire::TlsStream::handshake(Fd, wire::TlsRole::Server, Wire.Key, By);
  ::OPENSSL_cleanse(Wire.Key.data(), Wire.Key.size());
  return Tls;
}

} // namespace

int serveConnection(int Fd, const std::string &Peer, const ConnectionOptions &Given,
                    ConnectionWire &Wire, ConnectionRecord &Record) {
  ConnectionOptions Options = Given;
  // A host on the local socket is where the offer leads. One on a socket
  // file may be on another machine (ssh relays it), so it is served as over
  // TCP, offer included.
  bool Local = wire::isUnixSocket(Fd) && !wire::isSocketFile(Fd);
  if (Local)
    Options.Services.LocalOffer.clear();
  std::string Label = "catalyst-remote-executor[" + std::to_string(::getpid()) + "] " + Peer;
  // Only TLS may write on its stream, from the handshake on.
  if (!Wire.Tls)
    Heartbeat::sayWhyOnStop(Record.Sending);
  endOnTerminate(Fd);
  // The listener checked the host when a secret is set; kernels run in
  // this process from now on and do not find the secret in its memory.
  // (This wipes the listener's bytes as this process sees them, not the
  // listener's own.)
  Options.Secret.wipeNow();
  std::unique_ptr<wire::TlsStream> Tls;
  if (Wire.Tls) {
    auto T = acceptTls(Fd, Wire, Options.HandshakeTimeout);
    if (!T) {
      LogLine() << Label << ": " << toString(T.takeError());
      ::close(Fd);
      return 1;
    }
    Tls = std::move(*T);
  }
  // Once the host proved itself, and while the process has one thread (this
  // sets the environment). Kernels that need no assets run without it.
  if (auto Err = createAssetDirectory())
    LogLine() << Label << ": " << toString(std::move(Err));
  // Everything this host's services share; it outlives the server below.
  ConnectionServices Connection(Options.MaxReservedBytes, Options.MaxResidentBytes);
  if (auto Err = retainFreedMemory(Options.RetainedBytes))
    LogLine() << Label << ": " << toString(std::move(Err)) << "; kernels' memory is not kept";
  wire::SocketTransport *Transport = nullptr;
  wire::TransportOptions TOpts;
  TOpts.MaxMessageSize = Options.MaxMessageSize;
  TOpts.Mark = &Record.Sending;
  TOpts.ReadAfterFirstSend = true;
  TOpts.PeerSendsHeartbeats = false;
  TOpts.BeforeReply = Heartbeat::answering;
  if (Local)
    TOpts.Spin = wire::localSpin();
  // Without a secret, a peer is admitted by its first message, which the
  // listener waits for until the handshake deadline (and then ends this
  // process); a peer that has proven nothing gets no buffer larger than
  // that message can be.
  if (!Record.Admitted) {
    TOpts.FirstMessageLimit = wire::MaxFirstMessage;
    TOpts.OnFirstMessageRead = [&Record, Fd = Options.AdmittedFd] {
      Record.Admitted = true;
      // Best effort: the listener also looks at least once a second.
      [[maybe_unused]] ssize_t N = Fd >= 0 ? ::write(Fd, "a", 1) : 0;
    };
  }
  std::atomic<bool> Initialized{false};
  TOpts.OnFirstMessage = [&Initialized] {
    runRuntimeHook("__catalyst__rt__initialize");
    Initialized = true;
  };
  // Lent before the first message is read, taken back before the server
  // goes (TransportHandoff.h says who may use it until when).
  bool Extensions = !Options.Services.UpstreamOnly;
  TransportHandoff Handoff(Extensions ? &Connection.payloads() : nullptr,
                           Extensions && Local ? &Connection.sharedSlabs() : nullptr);
  TOpts.OnReaderStart = [&Transport, &Handoff] {
    prepareThreadForCrashes();
    Handoff.handOut(*Transport);
  };
  auto Server = SimpleRemoteEPCServer::Create<wire::SocketTransport>(
      [&](SimpleRemoteEPCServer::Setup &S) { return setup(S, Options, Connection); }, Fd, TOpts,
      std::move(Tls), &Transport);
  int Status = 0;
  if (!Server) {
    // A peer not admitted yet that left: the listener's summary counts it.
    if (Record.Admitted)
      LogLine() << Label << ": setup failed: " << toString(Server.takeError());
    else
      consumeError(Server.takeError());
    Status = Record.Admitted ? 1 : NeverAdmitted;
  } else {
    (*Server)->setErrorReporter(
        [&](Error Err) { LogLine() << Label << ": " << toString(std::move(Err)); });
    if (auto Err = (*Server)->waitForDisconnect()) {
      // A peer never admitted is counted in the listener's summary of
      // refusals instead: a flood of them must not flood the log.
      if (Record.Admitted)
        LogLine() << Label << ": session ended with an error: " << toString(std::move(Err));
      else
        consumeError(std::move(Err));
      Status = Record.Admitted ? 1 : NeverAdmitted;
    }
  }
  // The server, and the transport with it, goes when this returns.
  Handoff.takeBack();
  Record.Ended = true;
  if (Initialized)
    runRuntimeHook("__catalyst__rt__finalize");
  removeAssets();
  ConnectionFd = -1;
  return Status;
}

} // namespace catalyst::remote::executor
