//===- EngineHarness.h - Driving the C++ session API from tests -*- C++ -*-===//
//
// What the engine tests share: opening sessions with given options, error
// text, launch counters, and concat launches checked byte for byte against
// the same kernel run locally.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_ENGINEHARNESS_H
#define CATALYST_REMOTE_TESTS_ENGINEHARNESS_H

#include "Memref.h"
#include "catalyst/remote/Session.h"

#include <gtest/gtest.h>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace catalyst::remote::test {

// The engine tests run twice (tests/CMakeLists.txt): as they are, where a
// session with an executor of this project goes over its local socket and
// shared memory (transport auto), and with CATALYST_REMOTE_TEST_TRANSPORT=tcp,
// where every session that does not ask for a transport itself asks for TCP.
// Some run a third time with CATALYST_REMOTE_TEST_TRANSPORT=unix: as with
// tcp, but the executors listen at socket files (ExecutorProcess.h), so the
// sessions stay on those. What sessions with a real executor run over, then:
// Local, Tcp or SocketFile.
TransportKind testTransport();
// O for a session of this run: O itself, or asking for TCP in the TCP run
// when it asks for nothing.
SessionOptions forThisRun(SessionOptions O);

// Opens a session with forThisRun(O), reporting a failure (and returning
// null) if it cannot.
std::unique_ptr<Session> openSession(const std::string &Address, const SessionOptions &O = {});

// Opens a session with Transfer set to S, checks that S was granted and
// that concat.o links.
std::unique_ptr<Session> openWithConcat(const std::string &Address, Strategy S,
                                        SessionOptions O = {});

// Expects Err to be an error and returns its text ("" on success).
std::string errorText(llvm::Error Err);

// Err's text, or "" on success; expects nothing.
std::string messageOf(llvm::Error Err);

// Err's kind and text (Failure.h), or Other and "" on success; expects
// nothing.
FailureReport failureOf(llvm::Error Err);

// One-dimensional byte inputs of the given lengths, randomly filled.
std::vector<std::unique_ptr<Input>> byteInputs(const std::vector<int64_t> &Lengths,
                                               std::mt19937_64 &Rng);

// Launches concat_<N> on Ins and compares the output with the local kernel's.
::testing::AssertionResult concatMatches(Session &S,
                                         const std::vector<std::unique_ptr<Input>> &Ins);

// Runs concat_0, for which zerocopy reserves no slab. A session's first
// launch may be charged a request the linker sent just before it (the
// transport counts a request after writing it); a test that counts the
// launches after this one is all but certainly clear of that.
::testing::AssertionResult settle(Session &S);

// 64-byte places, as the slab hands them out: an empty buffer still takes one.
uint64_t slabPlace(uint64_t Bytes);

// Round trips of a launch with Inputs inputs and one fresh non-empty output
// once the slab fits: 1 for zerocopy, 3 for batched, 6N + 2 + 7 for naive
// (tests/capi/RoundTripTest.cpp says why).
uint64_t steadyTrips(Strategy S, uint64_t Inputs);

const char *strategyTestName(Strategy S);

} // namespace catalyst::remote::test

namespace catalyst::remote {
// How GoogleTest shows a Strategy parameter; found by argument lookup.
void PrintTo(Strategy S, std::ostream *OS);
// And a FailureKind, by its name.
void PrintTo(FailureKind K, std::ostream *OS);
} // namespace catalyst::remote

#endif
