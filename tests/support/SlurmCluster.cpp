//===- SlurmCluster.cpp - A Slurm cluster on this machine for one test ----===//

#include "SlurmCluster.h"

#include "Procfs.h"

#include <csignal>
#include <fstream>
#include <netinet/in.h>
#include <openssl/rand.h>
#include <random>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace catalyst::remote::test {

namespace {

using namespace std::chrono_literals;

// The partition every node is in; scancel -p empties the cluster.
constexpr const char *Partition = "test";

::testing::AssertionResult failure() {
  return ::testing::AssertionFailure();
}

// Small files only (keys, configurations, scripts), in folders only we
// may enter, so that the mode can follow the bytes.
bool writeFile(const std::string &Path, const std::string &Text, mode_t Mode) {
  {
    std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
    if (!(Out << Text) || !Out.flush())
      return false;
  }
  return ::chmod(Path.c_str(), Mode) == 0;
}

// munged refuses a socket unless every folder above it may be searched by
// all: the first one that may not, or "".
std::string unsearchableParent(const std::string &Path) {
  std::string Dir = Path;
  while (!Dir.empty() && Dir != "/") {
    Dir = Dir.substr(0, Dir.rfind('/'));
    struct stat St;
    std::string D = Dir.empty() ? "/" : Dir;
    if (::stat(D.c_str(), &St) != 0 || !(St.st_mode & S_IXOTH))
      return D;
  }
  return "";
}

// The kernel's range for the local ports of outgoing connections
// (ip_local_port_range): a daemon's port chosen inside it may be taken by
// any connection made before the daemon binds it, the tests' own included.
std::pair<int, int> ephemeralRange() {
  int Low = 32768, High = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> Low >> High;
  return {Low, High};
}

// A socket bound to 127.0.0.1:Port, or -1 when the port is taken.
int bindLoopback(int Port) {
  int Fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in A{};
  A.sin_family = AF_INET;
  A.sin_port = htons(uint16_t(Port));
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (Fd >= 0 && ::bind(Fd, reinterpret_cast<sockaddr *>(&A), sizeof(A)) == 0)
    return Fd;
  if (Fd >= 0)
    ::close(Fd);
  return -1;
}

// N loopback TCP ports free now, below the ephemeral range where it leaves
// room (else inside it), each held until all are chosen so that no two are
// the same; the daemons bind them moments later.
std::vector<std::string> freePorts(unsigned N) {
  auto [Low, High] = ephemeralRange();
  int From = Low > 12000 ? 10000 : High + 1, To = Low > 12000 ? Low - 1 : 65535;
  std::mt19937 Rng(std::random_device{}());
  std::vector<int> Held;
  std::vector<std::string> Ports;
  for (int Tries = 0; Ports.size() < N && Tries < 1000; ++Tries) {
    int Port = std::uniform_int_distribution<int>(From, To)(Rng);
    if (int Fd = bindLoopback(Port); Fd >= 0) {
      Held.push_back(Fd);
      Ports.push_back(std::to_string(Port));
    }
  }
  for (int Fd : Held)
    ::close(Fd);
  return Ports.size() == N ? Ports : std::vector<std::string>{};
}

std::string hostName() {
  char Host[256] = {};
  return ::gethostname(Host, sizeof(Host) - 1) == 0 && Host[0] ? Host : "localhost";
}

std::string lastLines(const std::string &Text, size_t Lines) {
  size_t At = Text.size();
  for (size_t I = 0; I <= Lines && At != std::string::npos && At > 0; ++I)
    At = Text.rfind('\n', At - 1);
  return At == std::string::npos ? Text : Text.substr(At + 1);
}

} // namespace

SlurmCluster::SlurmCluster(Options O) : Opts(O) {
  Tag = "CATALYST_REMOTE_TEST_CLUSTER=" + Dir.dir();
  ClientEnv = {"SLURM_CONF=" + Dir.path("slurm.conf"), Tag};
}

SlurmCluster::~SlurmCluster() {
  stop();
}

std::string SlurmCluster::missingPackage() {
  const std::pair<const char *, const char *> Needed[] = {
      {"munged", "munge"},        {"slurmctld", "slurmctld"}, {"slurmd", "slurmd"},
      {"srun", "slurm-client"},   {"sbatch", "slurm-client"}, {"scontrol", "slurm-client"},
      {"scancel", "slurm-client"}};
  for (auto [Program, Package] : Needed)
    if (findProgram(Program).empty())
      return Package;
  return "";
}

::testing::AssertionResult SlurmCluster::start() {
  if (Dir.dir().empty())
    return failure() << "no temporary folder for the cluster";
  if (auto R = prepare(); !R)
    return R;
  if (auto R = startReaper(); !R)
    return R;
  if (auto R = startMunge(); !R)
    return R;
  // A port another process took between choosing and binding it stops a
  // daemon: try again on other ports.
  ::testing::AssertionResult R = ::testing::AssertionFailure();
  for (int Attempt = 1; Attempt <= 3; ++Attempt) {
    R = startSlurm();
    if (R)
      R = waitForIdleNodes();
    if (R)
      return R;
    std::fprintf(stderr, "SlurmCluster: attempt %d to start Slurm failed: %s\n", Attempt,
                 R.message());
    stopSlurm();
  }
  return R;
}

::testing::AssertionResult SlurmCluster::prepare() {
  // The cluster's folder holds munge's socket: searchable by all, and so
  // must every folder above it be.
  if (::chmod(Dir.dir().c_str(), 0711) != 0)
    return failure() << "cannot chmod " << Dir.dir();
  if (std::string P = unsearchableParent(Dir.path("x")); !P.empty())
    return failure() << "munged needs every folder above its socket searchable by all, and " << P
                     << " is not: point TMPDIR elsewhere";
  std::vector<std::pair<std::string, mode_t>> Dirs = {
      {"munge", 0700}, {"run", 0755}, {"state", 0700}, {"spool", 0700}, {"tmp", 0700}};
  for (unsigned N = 1; N <= Opts.Nodes; ++N) {
    Dirs.push_back({"spool/n" + std::to_string(N), 0700});
    Dirs.push_back({"tmp/n" + std::to_string(N), 0700});
  }
  for (auto &[Name, Mode] : Dirs)
    if (::mkdir(Dir.path(Name).c_str(), Mode) != 0)
      return failure() << "cannot create " << Dir.path(Name);
  // munged wants a key of at least 32 bytes that only its user can read.
  unsigned char Key[1024];
  if (RAND_bytes(Key, sizeof(Key)) != 1 ||
      !writeFile(Dir.path("munge/key"), std::string(reinterpret_cast<char *>(Key), sizeof(Key)),
                 0400))
    return failure() << "cannot write munge's key " << Dir.path("munge/key");
  return ::testing::AssertionSuccess();
}

std::string SlurmCluster::writeConfig() const {
  std::vector<std::string> Ports = freePorts(Opts.Nodes + 1);
  for (const std::string &P : Ports)
    if (P == "0")
      return "";
  std::string Host = hostName(), D = Dir.dir();
  std::ostringstream C;
  C << "ClusterName=crtest\n"
    << "SlurmctldHost=" << Host << "(127.0.0.1)\n"
    << "SlurmctldPort=" << Ports[0]
    << "\n"
    // Root runs everything; without systemd there are no cgroups to use.
    << "SlurmUser=root\nSlurmdUser=root\n"
    << "AuthType=auth/munge\nCredType=cred/munge\n"
    << "AuthInfo=socket=" << D << "/run/munge.sock\n"
    << "StateSaveLocation=" << D
    << "/state\n"
    // Per node: the PMIx plugin's folders under these collide otherwise.
    << "SlurmdSpoolDir=" << D << "/spool/%n\n"
    << "TmpFS=" << D << "/tmp/%n\n"
    << "SlurmctldPidFile=" << D << "/state/slurmctld.pid\n"
    << "SlurmdPidFile=" << D << "/spool/%n/slurmd.pid\n"
    << "SlurmctldLogFile=" << D << "/slurmctld.log\n"
    << "SlurmdLogFile=" << D << "/slurmd.%n.log\n"
    << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
    << "JobAcctGatherType=jobacct_gather/none\n"
    << "AccountingStorageType=accounting_storage/none\n"
    // Heterogeneous jobs need the backfill scheduler; every second.
    << "SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=1\n"
    << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
    // Lets a node claim more CPUs than this machine has.
    << "SlurmdParameters=config_overrides\n"
    << "MpiDefault=none\nReturnToService=2\n"
    // A job's processes get SIGTERM and, this long after, SIGKILL: the
    // tests expect executors gone well before (ClusterHarness.h).
    << "KillWait=30\n";
  std::string NodeList;
  for (unsigned N = 1; N <= Opts.Nodes; ++N) {
    C << "NodeName=n" << N << " NodeHostname=" << Host << " NodeAddr=127.0.0.1 Port=" << Ports[N]
      << " CPUs=" << Opts.Cpus << "\n";
    NodeList += (N > 1 ? ",n" : "n") + std::to_string(N);
  }
  C << "PartitionName=" << Partition << " Nodes=" << NodeList
    << " Default=YES MaxTime=INFINITE State=UP\n";
  return C.str();
}

// A test killed by its timeout runs no destructor: its daemons get
// SIGTERM (BackgroundCommand), but srun then cannot reach the controller
// to end its step, and the step daemons and their tasks would run on. The
// reaper, a shell that gets SIGTERM with them, kills every process that
// carries the tag; it carries none itself.
::testing::AssertionResult SlurmCluster::startReaper() {
  const char *Script =
      "trap 'for e in /proc/[0-9]*/environ; do"
      " if grep -qzxF \"$1\" \"$e\" 2>/dev/null; then p=${e#/proc/}; kill -9 ${p%/environ};"
      " fi; done; exit 0' TERM; while :; do sleep 1; done";
  Reaper = std::make_unique<BackgroundCommand>();
  return Reaper->start({"/bin/sh", "-c", Script, "reaper", Tag}, Dir.path("reaper.out"));
}

::testing::AssertionResult SlurmCluster::startMunge() {
  std::string Socket = Dir.path("run/munge.sock");
  Munged = std::make_unique<BackgroundCommand>();
  auto R = Munged->start({findProgram("munged"), "-F", "--key-file=" + Dir.path("munge/key"),
                          "--socket=" + Socket, "--pid-file=" + Dir.path("munge/pid"),
                          "--log-file=" + Dir.path("munge/log"),
                          "--seed-file=" + Dir.path("munge/seed")},
                         Dir.path("munged.out"), {Tag});
  if (!R)
    return R;
  struct stat St;
  if (!waitUntil([&] { return ::stat(Socket.c_str(), &St) == 0 || !Munged->running(); },
                 Opts.StartTimeout) ||
      !Munged->running())
    return failure() << "munged did not create " << Socket << ":\n"
                     << lastLines(Munged->output(), 20);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult SlurmCluster::startSlurm() {
  std::string Conf = Dir.path("slurm.conf");
  std::string Config = writeConfig();
  if (Config.empty() || !writeFile(Conf, Config, 0644))
    return failure() << "cannot write " << Conf << " (or find free ports)";
  std::vector<std::string> Env = ClientEnv;
  Controller = std::make_unique<BackgroundCommand>();
  // -i: no state from an earlier run (there is none: a fresh folder).
  if (auto R = Controller->start({findProgram("slurmctld"), "-D", "-i", "-f", Conf},
                                 Dir.path("slurmctld.out"), Env);
      !R)
    return R;
  for (unsigned N = 1; N <= Opts.Nodes; ++N) {
    std::string Name = "n" + std::to_string(N);
    Nodes.push_back(std::make_unique<BackgroundCommand>());
    if (auto R = Nodes.back()->start({findProgram("slurmd"), "-D", "-N", Name, "-f", Conf},
                                     Dir.path("slurmd." + Name + ".out"), Env);
        !R)
      return R;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult SlurmCluster::waitForIdleNodes() {
  std::string Last;
  auto AllIdle = [&] {
    if (!Controller->running())
      return true; // said below
    CommandResult R = run("sinfo", {"-h", "-N", "-o", "%N %t"});
    Last = R.Output;
    std::istringstream Lines(R.Output);
    std::string Node, State;
    unsigned Idle = 0;
    while (Lines >> Node >> State)
      Idle += State == "idle";
    return R.ExitStatus == 0 && Idle == Opts.Nodes;
  };
  if (waitUntil(AllIdle, Opts.StartTimeout) && Controller->running())
    return ::testing::AssertionSuccess();
  return failure() << "the cluster's " << Opts.Nodes << " nodes were not idle within "
                   << Opts.StartTimeout.count() << " ms; sinfo says:\n"
                   << Last << daemonLogs();
}

std::string SlurmCluster::daemonLogs() const {
  std::string Out;
  auto Add = [&](const BackgroundCommand *C, const std::string &Name) {
    if (C)
      Out += "\n--- " + Name + (C->running() ? "" : " (" + C->status() + ")") + ":\n" +
             lastLines(C->output(), 15);
  };
  Add(Munged.get(), "munged");
  Add(Controller.get(), "slurmctld");
  for (size_t N = 0; N < Nodes.size(); ++N)
    Add(Nodes[N].get(), "slurmd n" + std::to_string(N + 1));
  return Out;
}

CommandResult SlurmCluster::run(const std::string &Program,
                                const std::vector<std::string> &Args) const {
  std::vector<std::string> Argv = {findProgram(Program)};
  Argv.insert(Argv.end(), Args.begin(), Args.end());
  return runCommand(Argv, Opts.CommandTimeout, ClientEnv);
}

::testing::AssertionResult SlurmCluster::srunInBackground(BackgroundCommand &Srun,
                                                          const std::vector<std::string> &Args,
                                                          const std::string &Output) const {
  std::vector<std::string> Argv = {findProgram("srun")};
  Argv.insert(Argv.end(), Args.begin(), Args.end());
  return Srun.start(Argv, Output, ClientEnv);
}

unsigned SlurmCluster::sbatch(const std::string &Script,
                              const std::vector<std::string> &Args) const {
  std::string Path = Dir.path("job" + std::to_string(++Scripts) + ".sh");
  if (!writeFile(Path, Script, 0700)) {
    ADD_FAILURE() << "cannot write " << Path;
    return 0;
  }
  std::vector<std::string> Argv = {"--parsable", "--chdir=" + Dir.dir(),
                                   "--output=" + Dir.path("job-%j.out")};
  Argv.insert(Argv.end(), Args.begin(), Args.end());
  Argv.push_back(Path);
  CommandResult R = run("sbatch", Argv);
  unsigned Job = 0;
  // --parsable prints "ID" or "ID;CLUSTER".
  if (R.ExitStatus != 0 || !(std::istringstream(R.Output) >> Job))
    ADD_FAILURE() << "sbatch " << Path << " " << R.ExitStatus << ":\n" << R.Output;
  return Job;
}

std::string SlurmCluster::jobState(unsigned Job) const {
  CommandResult R = run("scontrol", {"-o", "show", "job", std::to_string(Job)});
  size_t At = R.Output.find("JobState=");
  if (R.ExitStatus != 0 || At == std::string::npos)
    return "";
  At += 9;
  return R.Output.substr(At, R.Output.find_first_of(" \n", At) - At);
}

::testing::AssertionResult SlurmCluster::waitForJobState(unsigned Job,
                                                         const std::vector<std::string> &States,
                                                         std::chrono::milliseconds Timeout) const {
  std::string State;
  auto Reached = [&] {
    State = jobState(Job);
    return std::find(States.begin(), States.end(), State) != States.end();
  };
  if (waitUntil(Reached, Timeout))
    return ::testing::AssertionSuccess();
  std::string Wanted;
  for (const std::string &S : States)
    Wanted += " " + S;
  return failure() << "job " << Job << " is " << (State.empty() ? "unknown" : State)
                   << ", not one of" << Wanted << ", after " << Timeout.count() << " ms";
}

::testing::AssertionResult SlurmCluster::waitForJobEnd(unsigned Job,
                                                       std::chrono::milliseconds Timeout) const {
  return waitForJobState(
      Job, {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}, Timeout);
}

unsigned SlurmCluster::jobNamed(const std::string &Name) const {
  CommandResult R = run("squeue", {"-h", "-n", Name, "-o", "%A"});
  unsigned Job = 0;
  return R.ExitStatus == 0 && (std::istringstream(R.Output) >> Job) ? Job : 0;
}

CommandResult SlurmCluster::scancel(unsigned Job) const {
  return run("scancel", {std::to_string(Job)});
}

void SlurmCluster::stop() {
  if (Controller && Controller->running()) {
    run("scancel", {"-p", Partition});
    bool Drained = waitUntil(
        [&] {
          CommandResult R = run("squeue", {"-h", "-o", "%A"});
          return R.ExitStatus != 0 || R.Output.empty();
        },
        10s);
    if (!Drained)
      std::fprintf(stderr, "SlurmCluster: jobs still queued at teardown\n");
  }
  stopSlurm();
  killTagged();
  if (Munged && !Munged->stop(5s))
    std::fprintf(stderr, "SlurmCluster: munged needed SIGKILL\n");
  // Nothing is left for it to kill, and SIGTERM would have it look.
  if (Reaper) {
    Reaper->signal(SIGKILL);
    Reaper->wait(5s);
  }
  Reaper.reset();
  Munged.reset();
}

void SlurmCluster::stopSlurm() {
  for (auto &N : Nodes)
    N->signal(SIGTERM);
  for (auto &N : Nodes)
    if (!N->stop(5s))
      std::fprintf(stderr, "SlurmCluster: slurmd needed SIGKILL\n");
  if (Controller && !Controller->stop(10s))
    std::fprintf(stderr, "SlurmCluster: slurmctld needed SIGKILL\n");
  Nodes.clear();
  Controller.reset();
}

// Step daemons outlive slurmd, and what they run outlives them: all carry
// the tag, from the daemons' or the clients' environment.
void SlurmCluster::killTagged() {
  std::vector<pid_t> Left = processesWithEnvironment(Tag);
  if (Munged)
    Left.erase(std::remove(Left.begin(), Left.end(), Munged->pid()), Left.end());
  if (Left.empty())
    return;
  std::fprintf(stderr, "SlurmCluster: killing %zu processes left by the cluster\n", Left.size());
  for (pid_t P : Left)
    ::kill(P, SIGKILL);
  waitUntil([&] { return processesWithEnvironment(Tag).size() <= (Munged ? 1u : 0u); }, 5s);
}

} // namespace catalyst::remote::test
