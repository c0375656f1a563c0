//===- CapiHarness.h - Driving the C ABI from tests -------------*- C++ -*-===//
//
// The fixture every C ABI test uses: a failure handler that records instead
// of aborting, an executor, a session, and launches checked byte for byte
// against the same kernel run locally.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_CAPIHARNESS_H
#define CATALYST_REMOTE_TESTS_CAPIHARNESS_H

#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Memref.h"
#include "catalyst/remote/RemoteCAPI.h"

#include <gtest/gtest.h>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace catalyst::remote::test {

// Failures reported through __catalyst__remote__set_failure_handler.
class FailureLog {
public:
  // Installs the recording handler and forgets earlier failures, so that
  // tests sharing a process do not see each other's.
  static void install();
  // Failures reported on this thread so far.
  static size_t count();
  // This thread's latest failure, or "".
  static std::string last();
  // Every failure on any thread, oldest first.
  static std::vector<std::string> all();
};

struct OutSpec {
  size_t Rank;
  size_t ElemSize;
};

// Output descriptors for one launch. Frees each distinct buffer they point
// at when destroyed, except constant globals and buffers marked as kept
// (an input's, when a kernel run locally returned it).
class Outputs {
public:
  explicit Outputs(const std::vector<OutSpec> &Specs);
  ~Outputs();
  Outputs(const Outputs &) = delete;
  Outputs &operator=(const Outputs &) = delete;

  size_t size() const { return Descs.size(); }
  Desc &operator[](size_t I) { return Descs[I]; }
  const Desc &operator[](size_t I) const { return Descs[I]; }
  void keep(const void *P) { Kept.insert(P); }

  std::vector<void *> descs();
  std::vector<size_t> ranks() const;
  std::vector<size_t> elemSizes() const;

private:
  std::vector<Desc> Descs;
  std::set<const void *> Kept;
};

using InputList = std::vector<Desc *>;

// The three arrays the C ABI takes for a launch's inputs.
struct InputArrays {
  explicit InputArrays(const InputList &Inputs);
  std::vector<void *> Descs;
  std::vector<size_t> Ranks, Sizes;
};

// A caller buffer lent to receive one output (launch_into).
struct LentBuffer {
  void *Data;
  size_t Bytes;
};

// Calls __catalyst__remote__launch, or launch_into when Into is not empty;
// false when it reported a failure.
bool launchRemote(int64_t Session, const std::string &Entry, const std::string &Object,
                  const InputList &Inputs, Outputs &Out, const std::vector<LentBuffer> &Into = {});

// Launches the same through catalyst_remote_launch (RemoteBindings.h) and
// returns its status: 0, or the kind of failure, whose message is then
// __catalyst__remote__last_error() (the failure handler is not called).
int32_t launchStatus(int64_t Session, const std::string &Entry, const std::string &Object,
                     const InputList &Inputs, Outputs &Out);

// Queues the same through __catalyst__remote__launch_async_memrefs and
// returns its token (0 when it failed at once). Inputs and Out must live
// until the token is awaited.
int64_t launchRemoteAsync(int64_t Session, const std::string &Entry, const std::string &Object,
                          const InputList &Inputs, Outputs &Out);

// Runs a local kernel entry the way the executor would.
void runLocal(PyfaceEntry Fn, const InputList &Inputs, Outputs &Out);

// Remote outputs are dense row-major copies of the local ones' values.
::testing::AssertionResult sameOutputs(const Outputs &Remote, const Outputs &Local);

// Launches File's entry Name remotely and locally on Inputs and compares.
::testing::AssertionResult checkLaunch(int64_t Session, const std::string &File,
                                       const std::string &Name, const InputList &Inputs,
                                       const std::vector<OutSpec> &Specs);

// Closes a C ABI session when it goes out of scope.
class ScopedSession {
public:
  explicit ScopedSession(int64_t H = 0) : H(H) {}
  ~ScopedSession() { reset(); }
  ScopedSession(const ScopedSession &) = delete;
  ScopedSession &operator=(const ScopedSession &) = delete;
  int64_t get() const { return H; }
  void reset(int64_t New = 0);

private:
  int64_t H;
};

// How a test session moves memrefs. ZeroCopy, Batched and Naive ask the C
// ABI for that strategy through CATALYST_REMOTE_STRATEGY, over TCP
// (CATALYST_REMOTE_TRANSPORT); the Local ones for the same over the
// executor's local socket, zero-copy payloads in shared memory.
// UpstreamOnly runs the executor with --upstream-only, so the host must
// fall back to the upstream protocol (over TCP: such an executor offers
// nothing else).
enum class Mode { ZeroCopy, Batched, Naive, UpstreamOnly, ZeroCopyShm, BatchedShm, NaiveShm };
inline constexpr Mode AllModes[] = {Mode::ZeroCopy,     Mode::Batched,     Mode::Naive,
                                    Mode::UpstreamOnly, Mode::ZeroCopyShm, Mode::BatchedShm,
                                    Mode::NaiveShm};
const char *modeName(Mode M);
// M's strategy as a TCP mode (ZeroCopyShm: ZeroCopy), and its transport.
Mode overTcp(Mode M);
bool overShm(Mode M);
// What __catalyst__remote__stats must report for a session in mode M.
const char *expectedStrategy(Mode M);
const char *expectedTransport(Mode M);
void PrintTo(Mode M, std::ostream *OS);

// The strategy and the transport a session reports, or "" when stats fail.
std::string strategyOf(int64_t Session);
std::string transportOf(int64_t Session);

// A session's counters; a failure to read them fails the test.
catalyst_remote_stats statsOf(int64_t Session);
// Its last launch's.
inline catalyst_remote_launch_stats lastLaunch(int64_t Session) {
  return statsOf(Session).last;
}

// Sets an environment variable for its lifetime (unset when Value is null).
class ScopedEnv {
public:
  ScopedEnv(const char *Name, const char *Value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  std::string Name;
  bool Had;
  std::string Old;
};

class CapiTest : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  // Starts the executor and opens Session to it with the default strategy.
  void startAndOpen(const ExecutorOptions &Options = {});
  // The same in mode M, checking that the session uses M's strategy.
  void startAndOpen(Mode M, ExecutorOptions Options = {});
  // Sends kernel object File to Session, which must accept it.
  void sendKernel(const std::string &File);

  ExecutorProcess Exec;
  ScopedSession Session;
};

// Inputs of a launch as the C ABI takes them.
InputList inputsOf(const std::vector<Input *> &Ins);

// A C ABI test run once per mode.
class ModeTest : public CapiTest, public ::testing::WithParamInterface<Mode> {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(startAndOpen(GetParam()));
  }
};

std::string modeTestName(const ::testing::TestParamInfo<Mode> &Info);

} // namespace catalyst::remote::test

#endif
