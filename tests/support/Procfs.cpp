//===- Procfs.cpp - What /proc says about test processes ------------------===//

#include "Procfs.h"

#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>

namespace catalyst::remote::test {

namespace {

struct StatLine {
  char State = '?';
  pid_t Parent = -1;
};

// State and parent from /proc/<pid>/stat; the command name may hold spaces
// and parentheses, so fields are counted from the last ')'.
bool readStat(pid_t Pid, StatLine &Out) {
  std::string Line = readFile("/proc/" + std::to_string(Pid) + "/stat");
  auto Close = Line.rfind(')');
  if (Close == std::string::npos)
    return false;
  std::istringstream Rest(Line.substr(Close + 1));
  return static_cast<bool>(Rest >> Out.State >> Out.Parent);
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
  std::vector<pid_t> Pids;
  DIR *Proc = ::opendir("/proc");
  if (!Proc)
    return Pids;
  while (dirent *E = ::readdir(Proc)) {
    char *End = nullptr;
    long Pid = std::strtol(E->d_name, &End, 10);
    StatLine S;
    if (*End || Pid <= 0 || !readStat(pid_t(Pid), S))
      continue;
    if (S.Parent == Parent && S.State != 'Z' && S.State != 'X')
      Pids.push_back(pid_t(Pid));
  }
  ::closedir(Proc);
  return Pids;
}

bool processAlive(pid_t Pid) {
  StatLine S;
  return readStat(Pid, S) && S.State != 'Z' && S.State != 'X';
}

int64_t residentKiB(pid_t Pid) {
  std::istringstream Status(readFile("/proc/" + std::to_string(Pid) + "/status"));
  std::string Line;
  while (std::getline(Status, Line))
    if (Line.rfind("VmRSS:", 0) == 0)
      return std::strtoll(Line.c_str() + 6, nullptr, 10);
  return -1;
}

} // namespace catalyst::remote::test
