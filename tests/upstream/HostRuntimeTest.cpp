//===- HostRuntimeTest.cpp - Catalyst's host runtime against an executor --===//
//
// A program linked with Catalyst's own host runtime (rt_executor, over its
// catalyst_executor_session), calling the __catalyst__executor__* functions
// as a Catalyst-compiled program does, against the executor UPSTREAM_EXECUTOR
// names (UpstreamExecutor.h). Catalyst's host has no way to authenticate, so
// the executor runs without a token, on loopback. Catalyst's runtime reports
// failures by throwing Catalyst::Runtime::RuntimeException.
//
//===----------------------------------------------------------------------===//

#include "Exception.hpp"
#include "ExecutorCAPI.h"
#include "UpstreamExecutor.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using upstream::kernelObject;

// A session with a freshly started executor, closed and stopped at the end.
class HostRuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string Error;
    Exec = upstream::Executor::start(Error);
    ASSERT_TRUE(Exec) << Error;
    Session = __catalyst__executor__open(Exec->address().c_str());
    ASSERT_GT(Session, 0);
  }
  void TearDown() override {
    if (Session > 0) {
      EXPECT_EQ(__catalyst__executor__close(Session), 0);
    }
  }

  std::unique_ptr<upstream::Executor> Exec;
  int64_t Session = 0;
};

// A memref descriptor of rank R (Catalyst's runtime only reads the layout).
template <size_t R> struct Desc {
  void *Allocated;
  void *Aligned;
  int64_t Offset;
  int64_t Sizes[R > 0 ? R : 1];
  int64_t Strides[R > 0 ? R : 1];
};

// What map.c's map_r<R>_e<E> makes of element I, whose value is X: the low
// E bytes of X * M + (I << 64 | I), M by element size (see map_element).
unsigned __int128 mapped(unsigned __int128 X, uint64_t I, size_t E) {
  unsigned M = E == 1 ? 3 : E == 2 ? 5 : E == 4 ? 7 : E == 8 ? 11 : 13;
  return X * M + ((unsigned __int128)I << 64 | I);
}

unsigned __int128 load(const unsigned char *P, size_t E) {
  unsigned __int128 X = 0;
  std::memcpy(&X, P, E);
  return X;
}

// Dense row-major strides for Sizes.
template <size_t R> void setDense(Desc<R> &D, const std::array<int64_t, R> &Sizes) {
  int64_t Stride = 1;
  for (size_t K = R; K-- > 0;) {
    D.Sizes[K] = Sizes[K];
    D.Strides[K] = Stride;
    Stride *= Sizes[K];
  }
}

// Launches map_r<R>_e<E> on an input of Sizes whose data starts Offset
// elements into its buffer, and checks the output's layout and every
// element.
template <size_t R>
void launchMap(int64_t Session, size_t E, const std::array<int64_t, R> &Sizes, int64_t Offset) {
  int64_t N = 1;
  for (int64_t S : Sizes)
    N *= S;
  std::vector<unsigned char> Buf(size_t(N + Offset) * E);
  for (size_t B = 0; B < Buf.size(); ++B)
    Buf[B] = static_cast<unsigned char>(B * 37 + 11);
  Desc<R> In{Buf.data(), Buf.data(), Offset, {}, {}};
  setDense(In, Sizes);
  Desc<R> Out{};
  void *Ins[] = {&In};
  void *Outs[] = {&Out};
  size_t Ranks[] = {R}, ElemSizes[] = {E};
  std::string Entry = "_catalyst_pyface_map_r" + std::to_string(R) + "_e" + std::to_string(E);
  std::string Object = kernelObject("map");
  __catalyst__executor__launch(Session, Entry.c_str(), Object.c_str(), 1, Ins, Ranks, ElemSizes, 1,
                               Outs, Ranks, ElemSizes);

  ASSERT_NE(Out.Aligned, nullptr) << Entry;
  EXPECT_EQ(Out.Allocated, Out.Aligned) << Entry;
  EXPECT_EQ(Out.Offset, 0) << Entry;
  Desc<R> Dense{};
  setDense(Dense, Sizes);
  for (size_t K = 0; K < R; ++K) {
    EXPECT_EQ(Out.Sizes[K], Sizes[K]) << Entry << " dimension " << K;
    EXPECT_EQ(Out.Strides[K], Dense.Strides[K]) << Entry << " dimension " << K;
  }
  const auto *Got = static_cast<const unsigned char *>(Out.Aligned);
  unsigned __int128 Mask = E == 16 ? ~(unsigned __int128)0 : ((unsigned __int128)1 << (8 * E)) - 1;
  size_t Wrong = 0;
  for (int64_t I = 0; I < N; ++I) {
    unsigned __int128 X = load(&Buf[size_t(Offset + I) * E], E);
    Wrong += load(Got + size_t(I) * E, E) != (mapped(X, uint64_t(I), E) & Mask);
  }
  EXPECT_EQ(Wrong, 0u) << Entry << ": elements wrong of " << N;
  std::free(Out.Allocated); // from the rt_capi stand-in's malloc
}

TEST_F(HostRuntimeTest, LaunchesKernelsOfEveryRankAndElementSize) {
  ASSERT_EQ(__catalyst__executor__send_binary(Session, kernelObject("map").c_str(), 0), 0);
  for (size_t E : {1, 2, 4, 8, 16}) {
    launchMap<0>(Session, E, {}, 0);
    launchMap<1>(Session, E, {9}, 0);
    launchMap<2>(Session, E, {3, 5}, 0);
    launchMap<3>(Session, E, {2, 3, 4}, 0);
  }
}

// linalg.mlir's mlir_matmul, lowered from MLIR: its result buffer is
// allocated 64-byte aligned, so the executor's descriptor has allocated !=
// aligned; the host's has its own buffer.
TEST_F(HostRuntimeTest, LaunchesAnMlirLoweredKernel) {
  std::string Linalg = kernelObject("linalg");
  ASSERT_EQ(__catalyst__executor__send_binary(Session, Linalg.c_str(), 0), 0);
  std::array<double, 12> A, B;
  for (size_t I = 0; I < 12; ++I) {
    A[I] = double(I) - 5;
    B[I] = 3.0 * double(I) + 1;
  }
  Desc<2> DA{A.data(), A.data(), 0, {}, {}}, DB{B.data(), B.data(), 0, {}, {}}, DC{};
  setDense<2>(DA, {3, 4});
  setDense<2>(DB, {4, 3});
  void *Ins[] = {&DA, &DB};
  void *Outs[] = {&DC};
  size_t InRanks[] = {2, 2}, InSizes[] = {8, 8}, OutRanks[] = {2}, OutSizes[] = {8};
  __catalyst__executor__launch(Session, "_catalyst_pyface_mlir_matmul", Linalg.c_str(), 2, Ins,
                               InRanks, InSizes, 1, Outs, OutRanks, OutSizes);
  ASSERT_NE(DC.Aligned, nullptr);
  EXPECT_EQ(DC.Allocated, DC.Aligned);
  EXPECT_EQ(DC.Offset, 0);
  EXPECT_EQ(DC.Sizes[0], 3);
  EXPECT_EQ(DC.Sizes[1], 3);
  EXPECT_EQ(DC.Strides[0], 3);
  EXPECT_EQ(DC.Strides[1], 1);
  const auto *C = static_cast<const double *>(DC.Aligned);
  for (size_t I = 0; I < 3; ++I)
    for (size_t J = 0; J < 3; ++J) {
      double Sum = 0;
      for (size_t K = 0; K < 4; ++K)
        Sum += A[I * 4 + K] * B[K * 3 + J];
      EXPECT_EQ(C[I * 3 + J], Sum) << "element " << I << "," << J;
    }
  std::free(DC.Allocated);
}

TEST_F(HostRuntimeTest, SendsTheInputFromItsOffset) {
  ASSERT_EQ(__catalyst__executor__send_binary(Session, kernelObject("map").c_str(), 0), 0);
  launchMap<1>(Session, 8, {6}, 5);
  launchMap<2>(Session, 4, {4, 4}, 3);
}

TEST_F(HostRuntimeTest, SendingAnObjectAgainIsANoOp) {
  std::string Map = kernelObject("map");
  ASSERT_EQ(__catalyst__executor__send_binary(Session, Map.c_str(), 0), 0);
  ASSERT_EQ(__catalyst__executor__send_binary(Session, Map.c_str(), 0), 0);
  launchMap<1>(Session, 4, {5}, 0);
}

TEST_F(HostRuntimeTest, OpenReturnsTheLiveSessionForItsAddress) {
  EXPECT_EQ(__catalyst__executor__open(Exec->address().c_str()), Session);
}

// test_plugin.c's wrappers, called by symbol: raw bytes in and out.
std::string callWrapper(int64_t Session, const char *Symbol, const std::string &Args) {
  void *Out = nullptr;
  size_t Size = 0;
  EXPECT_EQ(
      __catalyst__executor__call_wrapper(Session, Symbol, Args.data(), Args.size(), &Out, &Size),
      0);
  std::string Result(static_cast<const char *>(Out), Size);
  __catalyst__executor__free_result(Out);
  return Result;
}

TEST_F(HostRuntimeTest, CallsWrapperFunctionsInThePlugin) {
  EXPECT_EQ(callWrapper(Session, "test_plugin_echo_reverse", "catalyst"), "tsylatac");
  EXPECT_EQ(callWrapper(Session, "test_plugin_three_bytes", ""), "xyz");
  std::string Hundred = callWrapper(Session, "test_plugin_hundred_bytes", "");
  ASSERT_EQ(Hundred.size(), 100u);
  for (int I = 0; I < 100; ++I)
    EXPECT_EQ(Hundred[size_t(I)], char(7 * I + 1)) << "byte " << I;
}

// tick.o calls into the plugin: its symbol resolves in the executor's
// process. Three launches started, then awaited, then counted there.
TEST_F(HostRuntimeTest, AsyncLaunchesRunOnceEachByTheirAwait) {
  std::string Tick = kernelObject("tick");
  ASSERT_EQ(__catalyst__executor__send_binary(Session, Tick.c_str(), 0), 0);
  std::vector<int64_t> Tokens;
  for (int I = 0; I < 3; ++I)
    Tokens.push_back(
        __catalyst__executor__launch_async(Session, "_catalyst_pyface_tick", Tick.c_str()));
  for (int64_t T : Tokens)
    __catalyst__executor__await(T);
  std::string Ticks = callWrapper(Session, "test_plugin_ticks", "");
  ASSERT_EQ(Ticks.size(), sizeof(uint64_t));
  uint64_t N = 0;
  std::memcpy(&N, Ticks.data(), sizeof(N));
  EXPECT_EQ(N, 3u);
}

// Catalyst's host sends an asset under its full path; the kernel side
// reads it back where its executor keeps the connection's assets
// (upstream_plugin.c).
TEST_F(HostRuntimeTest, StoresAnAssetTheKernelSideReads) {
  std::string Name = "host-runtime-" + std::to_string(getpid()) + ".asset";
  std::string Path =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/" + Name;
  std::string Payload;
  for (int I = 0; I < 4096; ++I)
    Payload.push_back(char(I % 256));
  std::ofstream(Path, std::ios::binary) << Payload;
  struct Remove {
    std::string Path;
    ~Remove() { std::remove(Path.c_str()); }
  } Cleanup{Path};
  ASSERT_EQ(__catalyst__executor__send_binary(Session, Path.c_str(), 1), 0);
  EXPECT_EQ(callWrapper(Session, "upstream_read_asset", Name), Payload);
}

// A failure is a RuntimeException carrying the reason, and the session
// goes on.
TEST_F(HostRuntimeTest, AFailedLaunchThrowsAndTheSessionGoesOn) {
  std::string Map = kernelObject("map");
  ASSERT_EQ(__catalyst__executor__send_binary(Session, Map.c_str(), 0), 0);
  try {
    __catalyst__executor__launch(Session, "_catalyst_pyface_no_such_entry", Map.c_str(), 0, nullptr,
                                 nullptr, nullptr, 0, nullptr, nullptr, nullptr);
    ADD_FAILURE() << "launching a missing entry did not throw";
  } catch (const Catalyst::Runtime::RuntimeException &E) {
    EXPECT_NE(std::string(E.what()).find("no_such_entry"), std::string::npos) << E.what();
  }
  launchMap<1>(Session, 4, {7}, 0);
}

TEST_F(HostRuntimeTest, AMissingObjectThrows) {
  EXPECT_THROW(__catalyst__executor__send_binary(Session, "/nonexistent/kernel.o", 0),
               Catalyst::Runtime::RuntimeException);
}

// After close, the address opens a new session that works.
TEST_F(HostRuntimeTest, ReopensAfterClose) {
  ASSERT_EQ(__catalyst__executor__close(Session), 0);
  Session = __catalyst__executor__open(Exec->address().c_str());
  ASSERT_GT(Session, 0);
  ASSERT_EQ(__catalyst__executor__send_binary(Session, kernelObject("map").c_str(), 0), 0);
  launchMap<2>(Session, 2, {2, 2}, 0);
}

} // namespace
