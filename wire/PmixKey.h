//===- PmixKey.h - What an executor publishes through PMIx ------*- C++ -*-===//
//
// An executor started with --announce pmix publishes the address hosts
// should dial under this key (PMIx_Put with PMIX_GLOBAL scope, then
// PMIx_Commit); a host in the same job reads it per rank (pmixSource()).
// Both ends include this header, so the key and the bound on a value's
// length cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_PMIXKEY_H
#define CATALYST_REMOTE_WIRE_PMIXKEY_H

#include <cstddef>

namespace catalyst::remote::wire {

inline constexpr char PmixAddressKey[] = "catalyst-remote.address";

// Longer values are not addresses: a host skips them. Fits "unix:" and a
// socket path, or a host name of 253 characters and a port.
inline constexpr size_t MaxPmixAddress = 512;

} // namespace catalyst::remote::wire

#endif
