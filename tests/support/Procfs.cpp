//===- Procfs.cpp - What /proc says about test processes ------------------===//

#include "Procfs.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace catalyst::remote::test {

namespace {

struct StatLine {
  char State = '?';
  pid_t Parent = -1;
  int64_t MinorFaults = -1;
};

// Fields of /proc/<pid>/stat; the command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
bool readStat(pid_t Pid, StatLine &Out) {
  std::string Line = readFile("/proc/" + std::to_string(Pid) + "/stat");
  auto Close = Line.rfind(')');
  if (Close == std::string::npos)
    return false;
  std::istringstream Rest(Line.substr(Close + 1));
  int64_t Group, Session, Tty, Foreground, Flags;
  return static_cast<bool>(Rest >> Out.State >> Out.Parent >> Group >> Session >> Tty >>
                           Foreground >> Flags >> Out.MinorFaults);
}

// Every process in /proc.
std::vector<pid_t> allProcesses() {
  std::vector<pid_t> Pids;
  DIR *Proc = ::opendir("/proc");
  if (!Proc)
    return Pids;
  while (dirent *E = ::readdir(Proc)) {
    char *End = nullptr;
    long Pid = std::strtol(E->d_name, &End, 10);
    if (!*End && Pid > 0)
      Pids.push_back(pid_t(Pid));
  }
  ::closedir(Proc);
  return Pids;
}

// Children of Parent (per /proc/<pid>/stat) whose state Keep accepts.
template <typename Pred> std::vector<pid_t> childrenWhere(pid_t Parent, Pred Keep) {
  std::vector<pid_t> Pids;
  for (pid_t Pid : allProcesses()) {
    StatLine S;
    if (readStat(Pid, S) && S.Parent == Parent && Keep(S.State))
      Pids.push_back(Pid);
  }
  return Pids;
}

// The number after Name ("VmRSS:", "Threads:") in /proc/<pid>/status, or -1.
int64_t statusField(pid_t Pid, const char *Name) {
  std::istringstream Status(readFile("/proc/" + std::to_string(Pid) + "/status"));
  std::string Line;
  size_t Len = std::strlen(Name);
  while (std::getline(Status, Line))
    if (Line.compare(0, Len, Name) == 0)
      return std::strtoll(Line.c_str() + Len, nullptr, 10);
  return -1;
}

} // namespace

std::string readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return "";
  std::ostringstream Buf;
  Buf << In.rdbuf();
  return Buf.str();
}

std::vector<pid_t> childrenOf(pid_t Parent) {
  return childrenWhere(Parent, [](char State) { return State != 'Z' && State != 'X'; });
}

std::vector<pid_t> zombiesOf(pid_t Parent) {
  return childrenWhere(Parent, [](char State) { return State == 'Z'; });
}

int64_t openFdCount(pid_t Pid) {
  DIR *Fds = ::opendir(("/proc/" + std::to_string(Pid) + "/fd").c_str());
  if (!Fds)
    return -1;
  int64_t N = 0;
  while (dirent *E = ::readdir(Fds))
    if (E->d_name[0] != '.')
      ++N;
  ::closedir(Fds);
  // The directory stream is an open descriptor of this process too.
  return Pid == ::getpid() ? N - 1 : N;
}

int64_t threadCount(pid_t Pid) {
  return statusField(Pid, "Threads:");
}

pid_t parentOf(pid_t Pid) {
  StatLine S;
  return readStat(Pid, S) ? S.Parent : -1;
}

bool processAlive(pid_t Pid) {
  StatLine S;
  return readStat(Pid, S) && S.State != 'Z' && S.State != 'X';
}

int64_t residentKiB(pid_t Pid) {
  return statusField(Pid, "VmRSS:");
}

int64_t minorFaults(pid_t Pid) {
  StatLine S;
  return readStat(Pid, S) ? S.MinorFaults : -1;
}

namespace {

// Whether every thread of Pid is in state State (its stat line's).
bool allThreadsIn(pid_t Pid, char State) {
  std::string Tasks = "/proc/" + std::to_string(Pid) + "/task";
  DIR *D = ::opendir(Tasks.c_str());
  if (!D)
    return false;
  bool All = true, Any = false;
  while (dirent *E = ::readdir(D)) {
    if (E->d_name[0] == '.')
      continue;
    std::string Line = readFile(Tasks + "/" + E->d_name + "/stat");
    auto Close = Line.rfind(')');
    Any = true;
    All &= Close != std::string::npos && Close + 2 < Line.size() && Line[Close + 2] == State;
  }
  ::closedir(D);
  return Any && All;
}

bool waitUntilAllIn(pid_t Pid, char State, std::chrono::milliseconds Timeout) {
  auto Deadline = std::chrono::steady_clock::now() + Timeout;
  while (!allThreadsIn(Pid, State)) {
    if (std::chrono::steady_clock::now() > Deadline)
      return false;
    ::usleep(1000);
  }
  return true;
}

} // namespace

bool waitUntilAsleep(pid_t Pid, std::chrono::milliseconds Timeout) {
  return waitUntilAllIn(Pid, 'S', Timeout);
}

bool waitUntilStopped(pid_t Pid, std::chrono::milliseconds Timeout) {
  return waitUntilAllIn(Pid, 'T', Timeout);
}

bool waitUntilExited(pid_t Pid, std::chrono::milliseconds Timeout) {
  auto Until = std::chrono::steady_clock::now() + Timeout;
  for (;;) {
    StatLine S;
    if (!readStat(Pid, S) || S.State == 'Z' || S.State == 'X')
      return true;
    if (std::chrono::steady_clock::now() > Until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

namespace {

// The entries of a NUL-separated list (a cmdline, an environ).
std::vector<std::string> entriesOf(const std::string &File) {
  std::string List = readFile(File);
  std::vector<std::string> Entries;
  for (size_t Start = 0; Start < List.size();) {
    size_t End = std::min(List.find('\0', Start), List.size());
    Entries.push_back(List.substr(Start, End - Start));
    Start = End + 1;
  }
  return Entries;
}

bool listHolds(const std::string &File, const std::string &Entry) {
  auto Entries = entriesOf(File);
  return std::find(Entries.begin(), Entries.end(), Entry) != Entries.end();
}

// Live processes other than this one for which Keep(pid) holds.
template <typename Pred> std::vector<pid_t> processesWhere(Pred Keep) {
  std::vector<pid_t> Pids;
  for (pid_t Pid : allProcesses())
    if (Pid != ::getpid() && Keep(Pid) && processAlive(Pid))
      Pids.push_back(Pid);
  return Pids;
}

} // namespace

std::vector<pid_t> processesRunning(const std::string &Exe, const std::string &Argument) {
  return processesWhere([&](pid_t Pid) {
    std::string Dir = "/proc/" + std::to_string(Pid);
    char Link[4096];
    ssize_t N = ::readlink((Dir + "/exe").c_str(), Link, sizeof(Link) - 1);
    // A binary rebuilt while it runs reads "PATH (deleted)".
    return N > 0 && std::string(Link, size_t(N)).rfind(Exe, 0) == 0 &&
           listHolds(Dir + "/cmdline", Argument);
  });
}

std::vector<pid_t> processesWithEnvironment(const std::string &Entry) {
  return processesWhere(
      [&](pid_t Pid) { return listHolds("/proc/" + std::to_string(Pid) + "/environ", Entry); });
}

std::string environmentOf(pid_t Pid, const std::string &Name) {
  std::string Prefix = Name + "=";
  for (const std::string &E : entriesOf("/proc/" + std::to_string(Pid) + "/environ"))
    if (E.compare(0, Prefix.size(), Prefix) == 0)
      return E.substr(Prefix.size());
  return "";
}

bool waitUntil(const std::function<bool()> &Condition, std::chrono::milliseconds Timeout) {
  auto Until = std::chrono::steady_clock::now() + Timeout;
  while (!Condition()) {
    if (std::chrono::steady_clock::now() > Until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

bool waitForText(const std::string &Path, const std::string &What,
                 std::chrono::milliseconds Timeout) {
  auto Until = std::chrono::steady_clock::now() + Timeout;
  while (readFile(Path).find(What) == std::string::npos) {
    if (std::chrono::steady_clock::now() > Until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

} // namespace catalyst::remote::test
