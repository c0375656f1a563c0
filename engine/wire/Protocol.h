//===- Protocol.h - Services the executor exports to the host ---*- C++ -*-===//
//
// Names and SPS signatures of the executor's bootstrap services, shared by
// both ends. The four `catalyst_remote_*` upstream services keep Catalyst's
// upstream signatures so either side can talk to the other project's peer;
// the launch service is this project's own and is advertised through the
// bootstrap map so a host can tell which executor it reached.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_PROTOCOL_H
#define CATALYST_REMOTE_WIRE_PROTOCOL_H

#include "llvm/ExecutionEngine/Orc/Shared/SimplePackedSerialization.h"

#include <cstdint>

namespace catalyst::remote::wire {

namespace sps = llvm::orc::shared;

// Upstream services (Catalyst's executor exports the same four).
inline constexpr const char *AllocName = "catalyst_remote_alloc";
inline constexpr const char *FreeName = "catalyst_remote_free";
inline constexpr const char *InvokeName = "catalyst_remote_invoke";
inline constexpr const char *StoreAssetName = "catalyst_remote_store_asset";

using SPSAllocSig = sps::SPSExecutorAddr(uint64_t);
using SPSFreeSig = void(sps::SPSExecutorAddr);
// entry, {rv, av}
using SPSInvokeSig = void(sps::SPSExecutorAddr, sps::SPSSequence<sps::SPSExecutorAddr>);
using SPSStoreAssetSig = int32_t(sps::SPSSequence<char>, sps::SPSString);

// This project's services.
inline constexpr const char *ProtocolKey = "catalyst_remote_protocol";
inline constexpr uint32_t ProtocolVersion = 1;
using SPSProtocolValue = uint32_t;

inline constexpr const char *LaunchName = "catalyst_remote_launch";

// One launch in one call. Request:
//   entry       : SPSExecutorAddr
//   inputs      : SPSSequence<{elem size: u64, sizes: SPSSequence<i64>, values: SPSSequence<char>}>
//   outputs     : SPSSequence<{rank: u64, elem size: u64}>
// The values are dense row-major. Reply: SPSExpected of
//   SPSSequence<{sizes: SPSSequence<i64>, values: SPSSequence<char>}>
// again dense row-major, one per output, in order.
using SPSLaunchInputHead = sps::SPSArgList<uint64_t, sps::SPSSequence<int64_t>, uint64_t>;
using SPSLaunchOutputSpec = sps::SPSTuple<uint64_t, uint64_t>;

// Batched launches: inputs are already in a host-managed slab; this runs
// the entry on Av and returns the output descriptors and the kernel's time.
// It first frees what the previous batched launch returned (nothing inside
// the slab, no constant global, nothing twice); release frees the last.
//   entry, av, output ranks, slab base, slab size
inline constexpr const char *BatchedInvokeName = "catalyst_remote_invoke_batched";
inline constexpr const char *BatchedReleaseName = "catalyst_remote_release_batched";
using SPSBatchedInvokeSig = sps::SPSExpected<sps::SPSTuple<sps::SPSSequence<char>, uint64_t>>(
    sps::SPSExecutorAddr, sps::SPSExecutorAddr, sps::SPSSequence<uint64_t>, sps::SPSExecutorAddr,
    uint64_t);
using SPSBatchedReleaseSig = void();

} // namespace catalyst::remote::wire

#endif
