//===- Session.h - One host's session with one executor ---------*- C++ -*-===//
//
// A session is one connection to a catalyst-remote executor (or to
// Catalyst's upstream executor) carrying ORC EPC: TCP, or the executor's
// local socket and shared memory when it runs on this machine. Through it the host links
// kernel objects into the executor, stores assets there, calls executor
// functions, and launches kernels on memref arguments.
//
// Methods may be called from several threads at once, close() included:
// launches take turns (they share the session's executor memory); a call in
// flight when another thread closes the session completes or fails saying
// the session was closed, and every call after it fails so. An executor
// that stops answering while a reply is due, or stops taking a request
// being sent, is declared dead after SessionOptions::LivenessTimeout, which
// closes the session.
//
// Errors are for a person to read, and those a program must act on carry a
// kind (Failure.h): a call on a closed session fails as Closed, one whose
// executor went away as ExecutorLost (KernelCrashed when a kernel killed
// its connection process, Timeout past SessionOptions::LaunchTimeout), a
// bad argument as BadArgument; open() fails as Unreachable, Authentication,
// Busy or Timeout where the executor could not be reached, refused the
// secret, was busy, or did not finish the handshake in time.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_H
#define CATALYST_REMOTE_SESSION_H

#include "catalyst/remote/ExecutorInfo.h"
#include "catalyst/remote/Failure.h"
#include "catalyst/remote/Launch.h"
#include "catalyst/remote/Resident.h"
#include "catalyst/remote/SessionOptions.h"
#include "catalyst/remote/Stats.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace catalyst::remote {

enum class BinaryFormat : uint32_t { Object = 0, Asset = 1 };

class Session {
public:
  // Connects to "host:port" ("[v6addr]:port" and names work too) or to
  // "unix:PATH", a socket file whose listener must run as this process's
  // user, and runs the EPC handshake, which must finish within
  // Options.HandshakeTimeout.
  static llvm::Expected<std::unique_ptr<Session>> open(llvm::StringRef Address,
                                                       const SessionOptions &Options = {});
  ~Session();

  llvm::StringRef address() const;

  // True while the connection is up.
  bool connected() const;

  // The strategy launches use: the one asked for, or what the executor
  // allowed falling back to.
  Strategy strategy() const;

  // What the connection runs over: Tcp (the address as given, unix:PATH
  // included), or Local for an executor on this machine
  // (SessionOptions::Transport).
  TransportKind transport() const;
  // What protects the session's bytes: "plain", or the TLS version and
  // cipher suite ("TLSv1.3 TLS_AES_128_GCM_SHA256"), with "(kernel TLS)"
  // when the kernel makes the records (SessionOptions::Wire).
  std::string protection() const;

  // The counters of the launches finished so far; never waits for one in
  // flight.
  SessionStats stats() const;

  // What the executor offers, as it announced when the session opened.
  const ExecutorInfo &executor() const;

  // Bytes moved so far, for showing a launch's progress from another thread
  // while it runs; zeros once the session is closed.
  Traffic traffic() const;

  // One round trip that does nothing on the executor: the connection's
  // latency, when timed.
  llvm::Error ping();

  // Ships a file: an object is linked into its own JITDylib now, so link
  // errors surface here; an asset is stored byte for byte in the executor's
  // asset directory, under its file name. The same path twice is a no-op
  // unless the file's bytes changed, when it is sent again; another file with
  // a file name already sent is an error.
  llvm::Error sendBinary(llvm::StringRef Path, BinaryFormat Format);

  // Calls Symbol, found in the executor process, as an ORC wrapper function.
  llvm::Expected<std::vector<char>> callWrapper(llvm::StringRef Symbol, llvm::ArrayRef<char> Args);

  // Runs one launch to completion. On failure the output descriptors are
  // zeroed and no host buffer is left allocated. Inputs may be residents,
  // and outputs may stay in the executor as residents (LaunchCall::Keep).
  llvm::Error launch(const LaunchCall &Call);

  // Copies the tensor In describes into the executor, which keeps it for
  // this session (Resident.h): launches then name it (MemrefArg::of) and
  // none of its values cross again. Needs the zero-copy strategy and an
  // executor that keeps residents; fails as BadArgument otherwise, and for
  // a bad descriptor. The executor bounds what a session keeps
  // (--max-resident-mib, with its slab budget) and refuses past it,
  // naming the option. Takes its turn with launches.
  llvm::Expected<Resident> upload(const MemrefArg &In);

  // Brings R's values back, R staying in the executor: Out's descriptor,
  // of R's rank and element size, is pointed at them, dense, as a launch's
  // output is: in Into when it is large enough, else in a fresh buffer
  // from SessionOptions::Outputs (LaunchCall::Into). Fails as BadArgument
  // for a handle this session does not hold (one a failed launch left
  // empty included) and for an Out of another rank or element size;
  // Out's descriptor is zeroed then, as on every failure.
  llvm::Error fetch(const Resident &R, const MemrefArg &Out, llvm::MutableArrayRef<char> Into = {});

  // Frees R in the executor, and empties R. Fails as BadArgument, freeing
  // nothing, for a handle this session did not make or has released
  // already (through any copy of it); as Closed or ExecutorLost once the
  // session is closed, when the executor has freed it with the connection.
  llvm::Error release(Resident &R);

  // Queues a launch and returns a ticket for await. The session's launches
  // run in order on a thread of its own, so launches to different sessions
  // overlap. The descriptors Call points at must stay valid until await.
  uint64_t launchAsync(const LaunchCall &Call);
  llvm::Error await(uint64_t Ticket);

  // Starts writing the session's trace to Path while it is open: the
  // events and file SessionOptions::TracePath gives from the start ("%p" is
  // the process id; sessions of one process tracing to one path share its
  // file, which the first to use it in the process truncates and later
  // ones, this one's later traces included, add to). The trace begins with
  // a "trace ADDRESS" span, in which the executor's clock is read. A call is
  // traced whole or not at all, as the trace was when it began: a launch in
  // flight is waited for and left out; an async launch begins when it
  // leaves the queue. Fails, naming the file and why, when Path cannot be
  // written; on a closed session; and when a trace is on already (from
  // open, or an earlier startTrace): stopTrace first. Failing rather than
  // replacing it keeps whoever started that trace (the environment, an
  // enclosing block) from losing it, or having its stop end this one.
  llvm::Error startTrace(llvm::StringRef Path);

  // Ends the trace, whether open or startTrace began it, and returns once
  // the calls writing to it have written (a launch in flight is in it,
  // whole): the file, valid JSON after each write, then holds all this
  // session wrote, and takes no more from it. Nothing to do when no trace
  // is on; succeeds. Not from inside a call on this session (an output
  // allocator's callback), which it would wait for.
  llvm::Error stopTrace();

  // Joins the session's async work (queued launches run first) and ends the
  // connection; a call in flight on another thread fails. Idempotent. A
  // session whose executor ended the connection (it stopped, or its
  // connection process died) closes without error: nothing is left there
  // to free.
  llvm::Error close();

  class Impl;

private:
  explicit Session(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> I;
};

} // namespace catalyst::remote

#endif
