//===- StatsJson.h - Counters and executor facts as JSON --------*- C++ -*-===//
//
// The one JSON spelling of what a session or pool reports, shared by the
// CLI's --json output and the bindings' describe (the Python package's
// stats() and info()): keys in snake_case, times in nanoseconds.
//
// Thread safety: pure functions of their arguments.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_STATSJSON_H
#define CATALYST_REMOTE_STATSJSON_H

#include "catalyst/remote/ExecutorInfo.h"
#include "catalyst/remote/Pool.h"
#include "catalyst/remote/Stats.h"

#include "llvm/Support/JSON.h"

namespace catalyst::remote {

// round_trips, messages, bytes_*, *_copy_bytes, slab_*, outputs_ready,
// resident_bytes and phases_ns {plan, send, copy_in, kernel, copy_out,
// receive, rewrite}.
llvm::json::Object launchStatsJson(const LaunchStats &S);
// launches, last, total, and residents {uploads, uploaded_bytes, fetches,
// fetched_bytes, releases, kept_outputs, held, held_bytes}.
llvm::json::Object sessionStatsJson(const SessionStats &S);
// version (null when not said), protocol, strategies, extensions,
// authenticated.
llvm::json::Object executorJson(const ExecutorInfo &E);
// launches, retried, members_lost, last, total, and members: each name,
// address, healthy, dropped, running, strategy, transport, launches, last,
// total, residents.
llvm::json::Object poolStatsJson(const PoolStats &S);

} // namespace catalyst::remote

#endif
