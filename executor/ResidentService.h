//===- ResidentService.h - Uploads, fetches and releases --------*- C++ -*-===//
//
// Serves the resident messages of wire/Residents.h on the connection's
// transport reader, answering each with a ResidentReply: an Upload's
// payload lands straight in a fresh buffer of the session's ResidentStore,
// a Fetch is answered with the resident's values sent from where they are,
// a Release frees what it names (each id it can, naming the ones it
// cannot). A refused request gets an error reply and the session goes on.
//
// The store is the connection's (ConnectionServices), given at
// construction, outliving this.
//
// Threads: place() and finish() on the transport's reader; attach() and
// detach() as TransportHandoff says.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_RESIDENTSERVICE_H
#define CATALYST_REMOTE_EXECUTOR_RESIDENTSERVICE_H

#include "ResidentStore.h"
#include "wire/Residents.h"
#include "wire/SocketTransport.h"

#include <string>
#include <sys/uio.h>
#include <vector>

namespace catalyst::remote::executor {

class ResidentService final : public wire::PayloadHandler {
public:
  explicit ResidentService(ResidentStore &Store) : Store(Store) {}
  ResidentService(const ResidentService &) = delete;
  ResidentService &operator=(const ResidentService &) = delete;

  // The transport replies go out on (PayloadRouter lends it).
  void attach(wire::SocketTransport &T) { Transport = &T; }
  void detach() { Transport = nullptr; }

  llvm::Expected<std::vector<iovec>> place(wire::PayloadOpcode OpC, uint64_t SeqNo,
                                           llvm::ArrayRef<char> Plan,
                                           uint64_t PayloadBytes) override;
  void finish(wire::PayloadOpcode OpC, uint64_t SeqNo,
              llvm::orc::shared::WrapperFunctionBuffer Plan, llvm::Error Err) override;
  void disconnected() override {}

private:
  llvm::Error reply(uint64_t SeqNo, llvm::StringRef Error, const wire::TensorShape &Shape,
                    llvm::ArrayRef<wire::PayloadPart> Parts = {});
  llvm::Error sendValues(uint64_t SeqNo, const ResidentStore::Resident &R);
  llvm::Error releaseAll();

  ResidentStore &Store;
  wire::SocketTransport *Transport = nullptr; // see ZeroCopyService.h
  // The request being read (reader thread): what place() decoded.
  uint64_t Uploading = 0; // the id an Upload's payload lands in, until finish()
  std::vector<uint64_t> Ids;
};

} // namespace catalyst::remote::executor

#endif
