//===- ExecutorProcess.cpp - A catalyst-remote-executor for one test ------===//

#include "ExecutorProcess.h"

#include "Procfs.h"

#include <cstdlib>
#include <thread>

namespace catalyst::remote::test {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> commandLine(const ExecutorOptions &Options, const std::string &Bind) {
  std::vector<std::string> Args = Options.Prefix;
  Args.insert(Args.end(), {executorPath(), "--bind", Bind});
  for (const auto &P : Options.Plugins) {
    Args.push_back("--plugin");
    Args.push_back(P);
  }
  if (Options.UpstreamOnly)
    Args.push_back("--upstream-only");
  Args.insert(Args.end(), Options.Args.begin(), Options.Args.end());
  return Args;
}

} // namespace

bool socketFileRun() {
  const char *Asked = std::getenv("CATALYST_REMOTE_TEST_TRANSPORT");
  return Asked && std::string(Asked) == "unix";
}

std::string executorPath() {
  if (const char *Override = std::getenv("CATALYST_REMOTE_EXECUTOR"))
    return Override;
  return CATALYST_EXECUTOR_PATH;
}

ExecutorProcess::~ExecutorProcess() {
  stop();
}

// Only stdout is read, for the address: the executor's log on stderr stays
// visible in the test output.
::testing::AssertionResult ExecutorProcess::start(const ExecutorOptions &Options) {
  std::string Error;
  std::string Bind = Options.Bind;
  if (Bind == ExecutorOptions::DefaultBind && socketFileRun()) {
    SocketDir = std::make_unique<TempDir>();
    Bind = "unix:" + SocketDir->path("executor.sock");
  }
  // A secret exported in the shell that runs the tests (for a host) would
  // guard every executor: each gets only what its test gives it.
  std::vector<std::string> Env = {"CATALYST_REMOTE_TOKEN_FILE", "CATALYST_REMOTE_TOKEN"};
  Env.insert(Env.end(), Options.Env.begin(), Options.Env.end());
  tools::ChildSpec Spec{commandLine(Options, Bind), Env, -1, StartTimeout};
  Spec.StderrPath = Options.LogPath;
  Child = tools::ListeningChild::start(Spec, Error);
  if (!Child)
    return ::testing::AssertionFailure() << Error;
  Address = Child->address();
  return ::testing::AssertionSuccess();
}

std::vector<pid_t> ExecutorProcess::connectionPids() const {
  return pid() > 0 ? childrenOf(pid()) : std::vector<pid_t>{};
}

::testing::AssertionResult
ExecutorProcess::waitForConnections(size_t N, std::vector<pid_t> &Pids,
                                    std::chrono::milliseconds Timeout) const {
  auto Deadline = Clock::now() + Timeout;
  for (;;) {
    Pids = connectionPids();
    if (Pids.size() == N)
      return ::testing::AssertionSuccess();
    if (Clock::now() > Deadline)
      return ::testing::AssertionFailure() << "expected " << N << " connection processes, found "
                                           << Pids.size() << " after " << Timeout.count() << " ms";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool ExecutorProcess::stop(std::chrono::milliseconds Timeout) {
  bool Clean = !Child || Child->stop(Timeout);
  Child.reset();
  SocketDir.reset();
  return Clean;
}

ExecutorOptions withRuntimeLog(const std::string &Dir, ExecutorOptions O) {
  O.Plugins.push_back(TEST_RT_PLUGIN_PATH);
  O.Env.push_back("CATALYST_TEST_RT_LOG=" + Dir + "/rt.log");
  O.LogPath = Dir + "/executor.log";
  return O;
}

} // namespace catalyst::remote::test
