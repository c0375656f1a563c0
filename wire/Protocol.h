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

#include "llvm/ADT/SmallVector.h"
#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"
#include "llvm/ExecutionEngine/Orc/Shared/SimplePackedSerialization.h"

#include <chrono>
#include <cstdint>
#include <tuple>
#include <vector>

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
// The version of everything below, one per release that changed it (0.1.0
// speaks 2); a host refuses an executor of another version, naming both.
inline constexpr const char *ProtocolKey = "catalyst_remote_protocol";
inline constexpr uint32_t ProtocolVersion = 2;
using SPSProtocolValue = uint32_t;
// The executor's release, as tools show it (catalyst-remote ping).
inline constexpr const char *VersionKey = "catalyst_remote_version";
using SPSVersionValue = sps::SPSString;

// Calls an ORC wrapper function in the executor process and returns its
// result, or its out-of-band error as an error: the stock EPC server turns
// such an error into an empty success.
inline constexpr const char *CallWrapperName = "catalyst_remote_call_wrapper";
using SPSCallWrapperSig = sps::SPSExpected<sps::SPSSequence<char>>(sps::SPSExecutorAddr,
                                                                   sps::SPSSequence<char>);

// Zero-copy launches travel as out-of-line payload messages (see
// SocketTransport.h). The executor advertises them in the bootstrap map
// (ZeroCopyKey, whose value is ZeroCopyVersion); the host enables them once
// per session, asking for that version, and either end refuses another,
// naming both. Launch inputs land in slabs the executor reserved for the
// session and checks every destination against.
inline constexpr const char *ZeroCopyKey = "catalyst_remote_zerocopy";
inline constexpr uint32_t ZeroCopyVersion = 3;
inline constexpr const char *ZeroCopyEnableName = "catalyst_remote_zerocopy_enable";
// Liveness: the host asks the executor for a heartbeat frame (see
// SocketTransport.h) every interval of work on a request, so that it can
// tell a busy executor from one that stopped answering.
inline constexpr const char *LivenessEnableName = "catalyst_remote_liveness_enable";
using SPSLivenessEnableSig = uint32_t(uint32_t); // interval in ms -> heartbeat version
inline constexpr uint32_t LivenessVersion = 1;
// The shortest interval either end uses: the host asks for no less, and
// the executor beats no more often, whatever it is asked (a thread that
// waits half an interval would otherwise spin).
inline constexpr std::chrono::milliseconds MinHeartbeatInterval{10};

// The services below are objects in the executor, each published as an
// instance bootstrap symbol, as ORC publishes its own: a host passes the
// instance as the first argument of every call to the service, and an
// executor refuses one it did not publish, naming the address.
//   zero-copy launches  ZeroCopyInstanceName: ZeroCopyEnableName
//   slabs               SlabsInstanceName: SlabReserveName, SlabReleaseName
//   shared slabs        SharedSlabsInstanceName: SharedSlabReserveName,
//                       MailboxOpenName
inline constexpr const char *ZeroCopyInstanceName = "catalyst_remote_zerocopy_instance";
inline constexpr const char *SlabsInstanceName = "catalyst_remote_slabs_instance";
inline constexpr const char *SharedSlabsInstanceName = "catalyst_remote_shared_slabs_instance";

// instance, host version -> the executor's (ZeroCopyVersion); a host that
// gets another back does not enable zero-copy launches.
using SPSZeroCopyEnableSig = sps::SPSExpected<uint32_t>(sps::SPSExecutorAddr, uint32_t);
inline constexpr const char *SlabReserveName = "catalyst_remote_slab_reserve";
inline constexpr const char *SlabReleaseName = "catalyst_remote_slab_release";
// instance, bytes -> the slab's base
using SPSSlabReserveSig = sps::SPSExpected<sps::SPSExecutorAddr>(sps::SPSExecutorAddr, uint64_t);
// instance, the slab's base
using SPSSlabReleaseSig = sps::SPSError(sps::SPSExecutorAddr, sps::SPSExecutorAddr);

// Launch plan; the payload is every input's values, in order.
//   entry, inputs {elem size, sizes, destination, bytes}, outputs {rank,
//   elem size}, source-ordered inputs {input index, strides}
// An input is dense in the payload, unless it is listed last: then its
// payload is its array in source order (wire/SourceOrder.h), which the
// executor transposes into the destination as it arrives. Each such
// input is listed once, in increasing order.
using SPSLaunchOutputSpec = sps::SPSTuple<uint64_t, uint64_t>;
using SPSZeroCopyInput =
    sps::SPSTuple<uint64_t, sps::SPSSequence<int64_t>, sps::SPSExecutorAddr, uint64_t>;
using SPSSourceOrdered = sps::SPSTuple<uint64_t, sps::SPSSequence<int64_t>>;
using SPSZeroCopyPlan =
    sps::SPSArgList<sps::SPSExecutorAddr, sps::SPSSequence<SPSZeroCopyInput>,
                    sps::SPSSequence<SPSLaunchOutputSpec>, sps::SPSSequence<SPSSourceOrdered>>;
// A memref's sizes, held inline up to rank 4, so that decoding a plan of
// many memrefs allocates nothing for each (a decoded plan is reused).
using Shape = llvm::SmallVector<int64_t, 4>;
using ZeroCopyInput = std::tuple<uint64_t, Shape, llvm::orc::ExecutorAddr, uint64_t>;
using LaunchOutputSpec = std::tuple<uint64_t, uint64_t>;
using SourceOrdered = std::tuple<uint64_t, Shape>;

// Shared memory (a session over the executor's local socket, see
// SocketTransport.h): slabs the executor reserves on the host's request
// come as memfds both map; a SharedLaunch's plan is a zero-copy plan whose
// destinations are in such slabs, the host having written the inputs there.
// A SharedResult's plan is a zero-copy result plan (with no payload), the
// bytes of all outputs, and where each output's dense values are: in an
// input slab (an output that is an input) or in the executor's output area,
// another memfd it passes the host when it grows. A SharedSlab message
// carries one memfd: kind (SharedSlabKind), base in the executor, bytes.
// On the host's request (MailboxOpenName) the executor passes the session's
// shared mailbox the same way (wire/Mailbox.h): small launches and results
// then go through it rather than the socket.
inline constexpr const char *SharedSlabReserveName = "catalyst_remote_shared_slab_reserve";
inline constexpr const char *MailboxOpenName = "catalyst_remote_mailbox_open";
using SPSMailboxOpenSig = sps::SPSError(sps::SPSExecutorAddr); // instance
enum class SharedSlabKind : uint8_t { Input = 0, Output = 1, Mailbox = 2 };
using SPSSharedSlab = sps::SPSArgList<uint8_t, sps::SPSExecutorAddr, uint64_t>;
using SPSSharedResult =
    sps::SPSArgList<sps::SPSSequence<char>, uint64_t, sps::SPSSequence<sps::SPSExecutorAddr>>;

// Result plan; the payload is every output's dense values, in order.
//   error (empty when the launch ran), outputs {sizes, bytes}, copy-in ns,
//   kernel ns, copy-out ns, executor copy bytes, and the executor's steady
//   clock (ns) when the inputs began to land
using SPSZeroCopyOutput = sps::SPSTuple<sps::SPSSequence<int64_t>, uint64_t>;
using SPSZeroCopyResult = sps::SPSArgList<sps::SPSString, sps::SPSSequence<SPSZeroCopyOutput>,
                                          uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>;
using ZeroCopyOutput = std::tuple<Shape, uint64_t>;

// Batched launches: inputs are already in a host-managed slab; this runs
// the entry on Av and returns the output descriptors, the executor's
// steady clock (ns) when the entry started, and the kernel's time. It first
// frees what the previous batched launch returned (nothing inside the
// slab, no constant global, nothing twice); release frees the last.
//   entry, av, output ranks, slab base, slab size
inline constexpr const char *BatchedInvokeName = "catalyst_remote_invoke_batched";
inline constexpr const char *BatchedReleaseName = "catalyst_remote_release_batched";
using SPSBatchedInvokeSig =
    sps::SPSExpected<sps::SPSTuple<sps::SPSSequence<char>, uint64_t, uint64_t>>(
        sps::SPSExecutorAddr, sps::SPSExecutorAddr, sps::SPSSequence<uint64_t>,
        sps::SPSExecutorAddr, uint64_t);
using SPSBatchedReleaseSig = void();

// The executor's steady clock (ns) and the id of the process serving the
// connection: a host writing a trace calls it a few times at open to map the
// executor's times onto its own clock.
inline constexpr const char *ClockName = "catalyst_remote_clock";
using SPSClockSig = sps::SPSTuple<uint64_t, uint64_t>();

} // namespace catalyst::remote::wire

#endif
