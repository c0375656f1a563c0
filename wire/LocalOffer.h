//===- LocalOffer.h - An executor's offer to hosts on its machine -*- C++ -*-===//
//
// A host on the executor's own machine can do better than TCP loopback: a
// Unix socket, and memory both processes map. The executor's listener also
// listens on an abstract Unix socket of a random name, and each connection
// it serves over TCP names it in its EPC setup message's bootstrap map,
// with the machine's boot id and the listener's pid: a host that finds its
// own boot id there may switch to that socket (engine/session/OpenChannel.cpp).
// A host that does not know the key (Catalyst's own) ignores it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_LOCALOFFER_H
#define CATALYST_REMOTE_WIRE_LOCALOFFER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace catalyst::remote::wire {

inline constexpr const char *LocalOfferKey = "catalyst_remote_local";

struct LocalOffer {
  std::string Socket; // an abstract Unix socket's name, without its leading NUL
  std::string BootId; // the executor's machine's /proc/sys/kernel/random/boot_id
  uint32_t Pid = 0;   // the listener, which SO_PEERCRED shows on that socket
};

// The bootstrap map value for Offer.
std::vector<char> encodeLocalOffer(const LocalOffer &Offer);

// The offer in an executor's EPC setup message (header included), when it
// makes one that can be used; nothing for malformed or implausible values
// (a name that does not fit a socket address, a pid of 0).
std::optional<LocalOffer> findLocalOffer(llvm::ArrayRef<char> SetupMessage);

// This machine's boot id, which differs between machines and between boots.
llvm::Expected<std::string> thisBootId();

} // namespace catalyst::remote::wire

#endif
