//===- StartupsTest.cpp - The budget of peers not yet authenticated -------===//
//
// The policy alone (executor/Startups.h): parsing --max-startups, early drop
// at the rate it says, the per-source budget; and the refusal log's summary
// (executor/RefusalLog.h). StartupTest runs them in a real executor.
//
//===----------------------------------------------------------------------===//

#include "../../executor/Startups.h"

#include "../../executor/RefusalLog.h"

#include "gtest/gtest.h"
#include <algorithm>
#include <fcntl.h>
#include <string>
#include <unistd.h>

using namespace catalyst::remote::executor;
using Verdict = Startups::Verdict;

namespace {

StartupLimits parsed(const std::string &Text) {
  StartupLimits L;
  if (auto Err = StartupLimits::parse(Text, L))
    ADD_FAILURE() << llvm::toString(std::move(Err));
  return L;
}

std::string parseError(const std::string &Text) {
  StartupLimits L;
  llvm::Error Err = StartupLimits::parse(Text, L);
  return Err ? llvm::toString(std::move(Err)) : "";
}

TEST(StartupLimitsTest, ParsesAsOpenSSHDoes) {
  StartupLimits L = parsed("10:30:100");
  EXPECT_EQ(L.Start, 10u);
  EXPECT_EQ(L.RatePercent, 30u);
  EXPECT_EQ(L.Full, 100u);
  L = parsed("7");
  EXPECT_EQ(L.Start, 7u);
  EXPECT_EQ(L.Full, 7u);
  for (std::string Bad : {"5:200:10", "20:30:10", "a:b:c", "1:2", "0", ""})
    EXPECT_NE(parseError(Bad), "") << Bad;
  EXPECT_NE(parseError("5:200:10").find("--max-startups '5:200:10'"), std::string::npos);
}

StartupLimits limits(unsigned Start, unsigned Rate, unsigned Full, unsigned PerSource) {
  StartupLimits L;
  L.Start = Start;
  L.RatePercent = Rate;
  L.Full = Full;
  L.PerSource = PerSource;
  return L;
}

TEST(StartupsTest, BelowStartEveryPeerIsAdmittedAndAtFullNone) {
  Startups S(limits(4, 0, 8, 100), 1);
  for (int I = 0; I < 4; ++I)
    EXPECT_EQ(S.admit("a"), Verdict::Admit);
  // Between Start and Full the chance rises from 0% to 100%.
  while (S.count() < 8)
    S.admit("a");
  EXPECT_EQ(S.admit("b"), Verdict::Full);
  S.done("a");
  EXPECT_EQ(S.count(), 7u);
}

TEST(StartupsTest, DropsEarlyAtTheRateItSays) {
  Startups S(limits(0, 50, 1000, 1000), 7);
  int Dropped = 0;
  for (int I = 0; I < 10000; ++I) {
    if (S.admit("a") == Verdict::EarlyDrop)
      ++Dropped;
    else
      S.done("a");
  }
  EXPECT_GT(Dropped, 4500);
  EXPECT_LT(Dropped, 5500);
  EXPECT_EQ(S.count(), 0u);
}

TEST(StartupsTest, OneSourceHoldsAtMostItsBudget) {
  Startups S(limits(100, 30, 1000, 2), 1);
  EXPECT_EQ(S.admit("10.0.0.1"), Verdict::Admit);
  EXPECT_EQ(S.admit("10.0.0.1"), Verdict::Admit);
  EXPECT_EQ(S.admit("10.0.0.1"), Verdict::SourceFull);
  EXPECT_EQ(S.admit("10.0.0.2"), Verdict::Admit);
  S.done("10.0.0.1");
  EXPECT_EQ(S.admit("10.0.0.1"), Verdict::Admit);
  EXPECT_NE(busyReason(Verdict::SourceFull).find("--max-startups-per-source"), std::string::npos);
  EXPECT_NE(busyReason(Verdict::Full).find("--max-startups)"), std::string::npos);
}

// Captures what is written to stderr while it lives.
class StderrCapture {
public:
  StderrCapture() {
    EXPECT_EQ(::pipe2(Pipe, O_NONBLOCK), 0);
    Saved = ::dup(STDERR_FILENO);
    ::dup2(Pipe[1], STDERR_FILENO);
  }
  ~StderrCapture() {
    ::dup2(Saved, STDERR_FILENO);
    ::close(Saved);
    ::close(Pipe[0]);
    ::close(Pipe[1]);
  }
  std::string take() {
    std::string Text;
    char Buf[4096];
    for (ssize_t N; (N = ::read(Pipe[0], Buf, sizeof(Buf))) > 0;)
      Text.append(Buf, size_t(N));
    return Text;
  }

private:
  int Pipe[2] = {-1, -1};
  int Saved = -1;
};

size_t lines(const std::string &Text) {
  return size_t(std::count(Text.begin(), Text.end(), '\n'));
}

TEST(RefusalLogTest, LogsTheFirstRefusalAndSummarizesTheRest) {
  using namespace std::chrono_literals;
  StderrCapture Err;
  const auto Interval = 10s;
  auto Now = RefusalLog::Clock::time_point() + 1h;
  RefusalLog Log(Interval, Now);
  Log.note(RefusalLog::Kind::WrongProof, "10.0.0.9", "refused 10.0.0.9:1: wrong token", Now);
  for (int I = 0; I < 60; ++I)
    Log.note(RefusalLog::Kind::Left, "10.0.0.1", "refused 10.0.0.1", Now + 1ms * I);
  for (int I = 0; I < 30; ++I)
    Log.note(RefusalLog::Kind::Silent, "10.0.0.2", "refused 10.0.0.2", Now + 9s);
  std::string First = Err.take();
  EXPECT_EQ(lines(First), 1u) << First;
  EXPECT_NE(First.find("wrong token"), std::string::npos) << First;
  EXPECT_EQ(Log.flush(Now + Interval - 1ms), Now + Interval) << "the interval is not over";
  EXPECT_EQ(Err.take(), "");
  Now += Interval + 2s;
  EXPECT_EQ(Log.flush(Now), Now + Interval);
  std::string Summary = Err.take();
  EXPECT_EQ(lines(Summary), 1u) << Summary;
  EXPECT_NE(Summary.find("refused 90 more peers in the last 12 s"), std::string::npos) << Summary;
  EXPECT_NE(Summary.find("60 left before authenticating"), std::string::npos) << Summary;
  EXPECT_NE(Summary.find("most from 10.0.0.1 (60), 10.0.0.2 (30)"), std::string::npos) << Summary;
  // A quiet interval logs nothing; the next refusal is logged at once.
  Now += Interval;
  Log.flush(Now);
  EXPECT_EQ(Err.take(), "");
  Log.note(RefusalLog::Kind::Left, "10.0.0.3", "refused 10.0.0.3", Now + 1s);
  EXPECT_EQ(lines(Err.take()), 1u);
}

} // namespace
