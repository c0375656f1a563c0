//===- TracePartsTest.cpp - The parts a trace is made with ----------------===//
//
// The offset estimate from timed readings, and the checks that keep an
// executor's times (bytes from another process) off a trace when they do
// not fit where the host saw the work happen; JSON text from any bytes; one
// file per path.
//
//===----------------------------------------------------------------------===//

#include "trace/ClockMap.h"
#include "trace/TraceEvents.h"
#include "trace/TraceFile.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>
#include <unistd.h>

using namespace catalyst::remote;

namespace {

constexpr uint64_t Ms = 1000000;

TEST(ClockMapTest, TheShortestRoundTripSetsTheOffset) {
  // The executor's clock is 5 s ahead; the second reading's call took 2 us.
  const ClockSample Samples[] = {{1000 * Ms, 6000 * Ms + 40000, 1000 * Ms + 90000},
                                 {2000 * Ms, 7000 * Ms + 1000, 2000 * Ms + 2000},
                                 {3000 * Ms, 8000 * Ms + 3000, 3000 * Ms + 30000}};
  auto C = ClockMap::fromSamples(Samples);
  ASSERT_TRUE(C);
  EXPECT_EQ(C->offsetNs(), int64_t(5000 * Ms));
  EXPECT_EQ(C->uncertaintyNs(), 1000u);
  // Allowed drift: 100 ppm of the time since the estimate.
  EXPECT_EQ(C->toleranceAt(2000 * Ms + 2000 + 10 * Ms), 1000u + 1000u);
}

TEST(ClockMapTest, ReadingsThatMakeNoSenseGiveNoMap) {
  const ClockSample Zero[] = {{1000, 0, 2000}};
  const ClockSample Backwards[] = {{2000, 5000, 1000}};
  const ClockSample Far[] = {{1000, UINT64_MAX, 2000}};
  EXPECT_FALSE(ClockMap::fromSamples(Zero));
  EXPECT_FALSE(ClockMap::fromSamples(Backwards));
  EXPECT_FALSE(ClockMap::fromSamples(Far));
  EXPECT_FALSE(ClockMap::fromSamples({}));
}

// Executor phases of 10 + 20 + 30 us, the host's launch from 100 to 300 us
// (host clock), the executor 1 s ahead and the map good to 2 us.
TEST(ClockMapTest, ExecutorTimesOutsideTheLaunchAreDropped) {
  const ClockSample Sync[] = {{0, 1000 * Ms + 2000, 4000}};
  auto C = ClockMap::fromSamples(Sync);
  ASSERT_TRUE(C);
  const uint64_t Phases[] = {10000, 20000, 30000};
  uint64_t Ahead = 1000 * Ms;
  auto Place = [&](uint64_t ExecutorStart, llvm::ArrayRef<uint64_t> Durations) {
    return C->place(ExecutorStart, Durations, 100000, 300000);
  };
  EXPECT_EQ(Place(Ahead + 150000, Phases), std::optional<uint64_t>(150000));
  // Within the uncertainty at either end.
  EXPECT_EQ(Place(Ahead + 100000 - 1500, Phases), std::optional<uint64_t>(98500));
  EXPECT_TRUE(Place(Ahead + 240000 + 1500, Phases));
  // Beyond it.
  EXPECT_FALSE(Place(Ahead + 100000 - 3000, Phases));
  EXPECT_FALSE(Place(Ahead + 240000 + 3000, Phases));
  // Not reported, or nonsense from a hostile peer.
  EXPECT_FALSE(Place(0, Phases));
  EXPECT_FALSE(Place(UINT64_MAX, Phases));
  const uint64_t Huge[] = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
  EXPECT_FALSE(Place(Ahead + 150000, Huge));
  EXPECT_FALSE(C->place(Ahead + 150000, Phases, 300000, 100000)) << "a window that ends first";
}

// Text from the executor (an error message) may hold any bytes: each
// becomes a JSON string that parses back to the same text, invalid UTF-8
// replaced.
TEST(TraceEventsTest, AnyBytesMakeAValidString) {
  using namespace std::string_literals;
  const std::pair<std::string, std::string> Cases[] = {
      {"plain", "plain"},
      {"quote \" backslash \\ slash /", "quote \" backslash \\ slash /"},
      {"controls \n\t\r\b\f\x01\x1f and a NUL \0 here"s,
       "controls \n\t\r\b\f\x01\x1f and a NUL \0 here"s},
      {"caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac"},
      {"bad \xff\xfe utf-8 \xc3", "bad \xef\xbf\xbd\xef\xbf\xbd utf-8 \xef\xbf\xbd"},
  };
  for (auto &[In, Expected] : Cases) {
    SCOPED_TRACE(In);
    std::string Json;
    appendJsonString(Json, In);
    auto Parsed = llvm::json::parse(Json);
    ASSERT_TRUE(bool(Parsed)) << llvm::toString(Parsed.takeError()) << ": " << Json;
    ASSERT_TRUE(Parsed->getAsString());
    EXPECT_EQ(Parsed->getAsString()->str(), Expected);
  }
}

TEST(TraceFileTest, OnePathOneFileInAProcess) {
  std::string Dir = ::testing::TempDir();
  auto A = TraceFile::get(Dir + "/one-%p.json");
  auto B = TraceFile::get(Dir + "/./one-" + std::to_string(::getpid()) + ".json");
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  EXPECT_EQ(A->get(), B->get());
  EXPECT_NE((*A)->path().find("one-" + std::to_string(::getpid()) + ".json"), std::string::npos);
  auto Bad = TraceFile::get(Dir + "/no-such-folder/t.json");
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("no-such-folder/t.json"), std::string::npos);
}

} // namespace
