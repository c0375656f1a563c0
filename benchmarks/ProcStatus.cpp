//===- ProcStatus.cpp - Memory figures Linux keeps in /proc ---------------===//

#include "ProcStatus.h"

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <sstream>

namespace catalyst::remote::bench {

namespace {

// The kB figure of the line starting with Field in a /proc file.
std::optional<uint64_t> kiBField(const std::string &Path, const std::string &Field) {
  std::ifstream In(Path);
  std::string Line;
  while (std::getline(In, Line)) {
    if (Line.compare(0, Field.size(), Field) != 0 || Line.size() <= Field.size() ||
        Line[Field.size()] != ':')
      continue;
    std::istringstream Rest(Line.substr(Field.size() + 1));
    uint64_t KiB = 0;
    if (Rest >> KiB)
      return KiB * 1024;
  }
  return std::nullopt;
}

std::vector<std::string> numericEntries(const std::string &Dir) {
  std::vector<std::string> Names;
  DIR *D = ::opendir(Dir.c_str());
  if (!D)
    return Names;
  while (dirent *E = ::readdir(D))
    if (E->d_name[0] >= '0' && E->d_name[0] <= '9')
      Names.push_back(E->d_name);
  ::closedir(D);
  return Names;
}

// Fast path: /proc/<pid>/task/<tid>/children, which needs CONFIG_PROC_CHILDREN.
std::optional<std::vector<pid_t>> childrenFromTasks(pid_t Pid) {
  std::string Tasks = "/proc/" + std::to_string(Pid) + "/task";
  std::vector<pid_t> Children;
  bool Readable = false;
  for (const std::string &Tid : numericEntries(Tasks)) {
    std::ifstream In(Tasks + "/" + Tid + "/children");
    if (!In)
      continue;
    Readable = true;
    for (pid_t Child; In >> Child;)
      Children.push_back(Child);
  }
  if (!Readable)
    return std::nullopt;
  return Children;
}

// Fallback for kernels without it: every process's parent, from its stat
// line ("pid (comm) state ppid ..."; comm may hold spaces and parentheses).
std::vector<pid_t> childrenFromStat(pid_t Pid) {
  std::vector<pid_t> Children;
  for (const std::string &Entry : numericEntries("/proc")) {
    std::ifstream In("/proc/" + Entry + "/stat");
    std::string Stat((std::istreambuf_iterator<char>(In)), std::istreambuf_iterator<char>());
    size_t Close = Stat.rfind(')');
    if (Close == std::string::npos)
      continue;
    std::istringstream Rest(Stat.substr(Close + 1));
    std::string State;
    pid_t Parent = 0;
    if (Rest >> State >> Parent && Parent == Pid)
      Children.push_back(pid_t(std::stol(Entry)));
  }
  return Children;
}

} // namespace

std::optional<uint64_t> statusBytes(pid_t Pid, const std::string &Field) {
  std::string Path = Pid ? "/proc/" + std::to_string(Pid) + "/status" : "/proc/self/status";
  return kiBField(Path, Field);
}

std::optional<uint64_t> memAvailable() {
  return kiBField("/proc/meminfo", "MemAvailable");
}

std::vector<pid_t> childrenOf(pid_t Pid) {
  std::vector<pid_t> Children;
  if (auto FromTasks = childrenFromTasks(Pid))
    Children = std::move(*FromTasks);
  else
    Children = childrenFromStat(Pid);
  std::sort(Children.begin(), Children.end());
  return Children;
}

pid_t newChildOf(pid_t Pid, const std::vector<pid_t> &Before) {
  pid_t Found = 0;
  for (pid_t Child : childrenOf(Pid)) {
    if (std::binary_search(Before.begin(), Before.end(), Child))
      continue;
    if (Found)
      return 0;
    Found = Child;
  }
  return Found;
}

} // namespace catalyst::remote::bench
