//===- BindingsTest.cpp - The C ABI for language bindings -----------------===//
//
// RemoteBindings.h returns each failure's kind and never calls a failure
// handler: options are parsed and named when wrong, a closed handle says
// so, launches and describe work as through the other prefixes.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"
#include "Procfs.h"
#include "TempDir.h"
#include "catalyst/remote/RemoteBindings.h"

#include <cstdlib>

using namespace catalyst::remote::test;

namespace {

class BindingsTest : public CapiTest {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ASSERT_TRUE(Exec.start());
  }

  // Opens with Options; returns the status, the handle in H.
  int32_t open(std::vector<const char *> Options, int64_t &H) {
    return catalyst_remote_open(Exec.address().c_str(), Options.data(), Options.size(), &H);
  }

  std::string lastError() { return __catalyst__remote__last_error(); }
};

TEST_F(BindingsTest, BadOptionsAreNamedAndNothingIsReportedThroughTheHandler) {
  int64_t H = 7;
  EXPECT_EQ(open({"strategy=fastest"}, H), CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_EQ(H, 0);
  EXPECT_NE(lastError().find("fastest"), std::string::npos) << lastError();
  EXPECT_EQ(open({"liveness_ms=soon"}, H), CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_NE(lastError().find("'liveness_ms=soon': not a whole number"), std::string::npos)
      << lastError();
  EXPECT_EQ(open({"colour=blue"}, H), CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_NE(lastError().find("'colour=blue': not one this library knows"), std::string::npos)
      << lastError();
  EXPECT_EQ(open({"strategy"}, H), CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_NE(lastError().find("'strategy': not name=value"), std::string::npos) << lastError();
  EXPECT_EQ(open({"pool_min=0"}, H), CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_EQ(catalyst_remote_open(Exec.address().c_str(), nullptr, 1, &H),
            CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_EQ(FailureLog::count(), 0u) << "the bindings reported through a failure handler";
}

TEST_F(BindingsTest, EachOpenIsASessionOfItsOwnWithItsOptions) {
  int64_t A = 0, B = 0;
  ASSERT_EQ(open({"strategy=naive", "transport=tcp"}, A), CATALYST_REMOTE_OK) << lastError();
  ASSERT_EQ(open({"strategy=batched", "transport=tcp"}, B), CATALYST_REMOTE_OK) << lastError();
  EXPECT_NE(A, B);
  EXPECT_EQ(strategyOf(A), "naive");
  EXPECT_EQ(strategyOf(B), "batched");
  char *Json = nullptr;
  ASSERT_EQ(catalyst_remote_describe(A, &Json), CATALYST_REMOTE_OK) << lastError();
  std::string Text = Json;
  __catalyst__remote__free_result(Json);
  for (const char *Field : {"\"kind\":\"session\"", "\"strategy\":\"naive\"",
                            "\"transport\":\"tcp\"", "\"stats\":{", "\"executor\":{"})
    EXPECT_NE(Text.find(Field), std::string::npos) << Field << " in " << Text;
  EXPECT_EQ(catalyst_remote_close(A), CATALYST_REMOTE_OK);
  EXPECT_EQ(catalyst_remote_close(B), CATALYST_REMOTE_OK);
}

TEST_F(BindingsTest, LaunchesReturnTheirStatus) {
  int64_t H = 0;
  ASSERT_EQ(open({}, H), CATALYST_REMOTE_OK) << lastError();
  ASSERT_EQ(catalyst_remote_send_binary(H, kernelObject("map").c_str(), 0), CATALYST_REMOTE_OK)
      << lastError();
  std::mt19937_64 Rng(3);
  auto In = makeInput(Layout::Dense, {4, 3}, 8, Rng);
  Outputs Out({{2, 8}});
  InputList Ins = inputsOf({In.get()});
  InputArrays Arrays(Ins);
  auto OutDescs = Out.descs();
  auto OutRanks = Out.ranks();
  auto OutSizes = Out.elemSizes();
  std::string Entry = remoteEntry(rankSizeEntry("map", 2, 8));
  EXPECT_EQ(catalyst_remote_launch(H, Entry.c_str(), "map.o", 1, Arrays.Descs.data(),
                                   Arrays.Ranks.data(), Arrays.Sizes.data(), 1, OutDescs.data(),
                                   OutRanks.data(), OutSizes.data()),
            CATALYST_REMOTE_OK)
      << lastError();
  Outputs Local({{2, 8}});
  runLocal(hostEntry("map", "map_r2_e8"), Ins, Local);
  EXPECT_TRUE(sameOutputs(Out, Local));
  std::string Missing = remoteEntry("no_such_entry");
  EXPECT_EQ(catalyst_remote_launch(H, Missing.c_str(), "map.o", 0, nullptr, nullptr, nullptr, 0,
                                   nullptr, nullptr, nullptr),
            CATALYST_REMOTE_OTHER);
  EXPECT_NE(lastError().find("no_such_entry"), std::string::npos) << lastError();
  EXPECT_EQ(catalyst_remote_close(H), CATALYST_REMOTE_OK);
}

TEST_F(BindingsTest, AClosedHandleSaysItWasClosed) {
  int64_t H = 0;
  ASSERT_EQ(open({}, H), CATALYST_REMOTE_OK) << lastError();
  ASSERT_EQ(catalyst_remote_close(H), CATALYST_REMOTE_OK);
  EXPECT_EQ(catalyst_remote_send_binary(H, kernelObject("map").c_str(), 0), CATALYST_REMOTE_CLOSED);
  EXPECT_NE(lastError().find("was closed"), std::string::npos) << lastError();
  EXPECT_EQ(catalyst_remote_send_binary(1 << 30, "x.o", 0), CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_NE(lastError().find("unknown session handle"), std::string::npos) << lastError();
}

// Tracing a handle: a ping while the trace is on is in its file, a second
// start is refused naming the first file, and a start without a path
// names what is missing.
TEST_F(BindingsTest, TracesStartAndStopOnAnOpenHandle) {
  TempDir Dir;
  std::string First = Dir.path("first.json"), Second = Dir.path("second.json");
  int64_t H = 0;
  ASSERT_EQ(open({}, H), CATALYST_REMOTE_OK) << lastError();
  ASSERT_EQ(catalyst_remote_start_trace(H, First.c_str()), CATALYST_REMOTE_OK) << lastError();
  EXPECT_EQ(catalyst_remote_start_trace(H, Second.c_str()), CATALYST_REMOTE_OTHER);
  EXPECT_NE(lastError().find("first.json"), std::string::npos) << lastError();
  EXPECT_EQ(catalyst_remote_send_binary(H, kernelObject("map").c_str(), 0), CATALYST_REMOTE_OK)
      << lastError();
  EXPECT_EQ(catalyst_remote_stop_trace(H), CATALYST_REMOTE_OK) << lastError();
  EXPECT_EQ(catalyst_remote_stop_trace(H), CATALYST_REMOTE_OK) << "stopping twice is harmless";
  std::string Trace = readFile(First);
  EXPECT_NE(Trace.find("\"link "), std::string::npos) << Trace;
  EXPECT_NE(Trace.find("\"trace "), std::string::npos) << Trace;
  EXPECT_EQ(readFile(Second), "") << "the refused start wrote a file";
  EXPECT_EQ(catalyst_remote_start_trace(H, nullptr), CATALYST_REMOTE_BAD_ARGUMENT);
  EXPECT_NE(lastError().find("start_trace: no path"), std::string::npos) << lastError();
  EXPECT_EQ(catalyst_remote_close(H), CATALYST_REMOTE_OK);
  EXPECT_EQ(catalyst_remote_stop_trace(H), CATALYST_REMOTE_CLOSED);
}

} // namespace
