//===- CpuUse.cpp - Who kept the CPUs busy in a measurement ---------------===//

#include "CpuUse.h"

#include "ProcStatus.h"

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <unistd.h>

namespace catalyst::remote::bench {

namespace {

double tickSeconds() {
  static const double Tick = 1.0 / double(::sysconf(_SC_CLK_TCK));
  return Tick;
}

// The machine's "cpu" line of /proc/stat: user nice system idle iowait irq
// softirq steal ... in ticks. Busy is everything but idle, iowait and
// steal (guest time is already inside user).
void machineSeconds(double &Busy, double &Softirq) {
  std::ifstream In("/proc/stat");
  std::string Label;
  uint64_t User = 0, Nice = 0, System = 0, Idle = 0, Wait = 0, Irq = 0, Soft = 0;
  In >> Label >> User >> Nice >> System >> Idle >> Wait >> Irq >> Soft;
  Busy = double(User + Nice + System + Irq + Soft) * tickSeconds();
  Softirq = double(Soft) * tickSeconds();
}

double childrenSeconds(const std::vector<pid_t> &Parents, std::map<pid_t, double> &Each) {
  double Sum = 0;
  for (pid_t Parent : Parents)
    for (pid_t Child : childrenOf(Parent)) {
      double S = processCpuSeconds(Child);
      Each[Child] = S;
      Sum += S;
    }
  return Sum;
}

double sumOf(const std::vector<pid_t> &Pids) {
  double Sum = 0;
  for (pid_t Pid : Pids)
    Sum += processCpuSeconds(Pid);
  return Sum;
}

} // namespace

double processCpuSeconds(pid_t Pid) {
  std::ifstream In(Pid ? "/proc/" + std::to_string(Pid) + "/stat" : "/proc/self/stat");
  std::string Stat((std::istreambuf_iterator<char>(In)), std::istreambuf_iterator<char>());
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses;
  // utime and stime are the 12th and 13th fields after it.
  size_t Close = Stat.rfind(')');
  if (Close == std::string::npos)
    return 0;
  std::istringstream Rest(Stat.substr(Close + 1));
  std::string Field;
  for (int I = 0; I < 11 && Rest >> Field; ++I)
    ;
  uint64_t User = 0, System = 0;
  if (!(Rest >> User >> System))
    return 0;
  return double(User + System) * tickSeconds();
}

CpuSample CpuWatch::sample() const {
  CpuSample S;
  S.At = std::chrono::steady_clock::now();
  S.Host = processCpuSeconds(0);
  S.Members = sumOf(Executors) + childrenSeconds(Executors, S.Children);
  S.Relays = sumOf(Relays);
  machineSeconds(S.Busy, S.Softirq);
  return S;
}

void CpuUse::add(const CpuSample &Before, const CpuSample &After) {
  Wall += std::chrono::duration<double>(After.At - Before.At).count();
  Host += After.Host - Before.Host;
  // A child that was not there before counts from zero; one that ended
  // meanwhile is lost (its time went to its parent only once reaped).
  double Members = After.Members;
  for (const auto &[Pid, Seconds] : Before.Children)
    if (After.Children.count(Pid))
      Members -= Seconds;
  double Parents = Before.Members;
  for (const auto &[Pid, Seconds] : Before.Children)
    Parents -= Seconds;
  this->Members += Members - Parents;
  Relays += After.Relays - Before.Relays;
  Softirq += After.Softirq - Before.Softirq;
  Busy += After.Busy - Before.Busy;
}

void CpuUse::report(benchmark::UserCounters &C) const {
  if (Wall <= 0)
    return;
  C["cpu_host"] = Host / Wall;
  C["cpu_members"] = Members / Wall;
  C["cpu_relays"] = Relays / Wall;
  C["cpu_softirq"] = Softirq / Wall;
  C["cpu_machine"] = Busy / Wall;
  double Other = Busy - Host - Members - Relays - Softirq;
  C["cpu_other"] = (Other > 0 ? Other : 0) / Wall;
}

} // namespace catalyst::remote::bench
