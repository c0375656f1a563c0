//===- LoweredHostTest.cpp - The executor-dialect program, run ------------===//
//
// host_program.mlir.in, lowered by Catalyst's --convert-executor-to-llvm and
// upstream MLIR to an object at build time, is linked into this test with a
// host library: this project's libcatalyst_remote.so or Catalyst's
// rt_executor (CMake builds one binary per library). Each test calls one of
// the program's functions through its C interface, against the executor
// UPSTREAM_EXECUTOR names, and checks every result value.
//
// A compiled program carries the executor's address as a constant, and this
// executor's port is known only once it runs: the test is linked with
// --wrap=__catalyst__executor__open, so the program's open call lands in
// __wrap___catalyst__executor__open below, which checks the program passed
// the address it was compiled with and opens the running executor instead.
//
//===----------------------------------------------------------------------===//

#include "UpstreamExecutor.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <string>

namespace {

template <typename T, size_t R> struct MemRef {
  T *Allocated;
  T *Aligned;
  int64_t Offset;
  int64_t Sizes[R];
  int64_t Strides[R];
};

// A descriptor over Data, dense and row-major.
template <typename T, size_t R, size_t N>
MemRef<T, R> view(std::array<T, N> &Data, const std::array<int64_t, R> &Sizes) {
  MemRef<T, R> M{Data.data(), Data.data(), 0, {}, {}};
  int64_t Stride = 1;
  for (size_t K = R; K-- > 0;) {
    M.Sizes[K] = Sizes[K];
    M.Strides[K] = Stride;
    Stride *= Sizes[K];
  }
  return M;
}

std::string Address;

} // namespace

// The program's functions (func.func with llvm.emit_c_interface).
extern "C" {
void _mlir_ciface_launch_map(MemRef<int32_t, 1> *A, MemRef<int64_t, 2> *B, MemRef<int32_t, 1> *RA,
                             MemRef<int64_t, 2> *RB);
void _mlir_ciface_launch_matmul(MemRef<double, 2> *A, MemRef<double, 2> *B, MemRef<double, 2> *C);
void _mlir_ciface_tick_and_call(MemRef<int64_t, 1> *Ticks, MemRef<uint8_t, 1> *In,
                                MemRef<uint8_t, 1> *Reversed);
void _mlir_ciface_asset(MemRef<char, 1> *Name, MemRef<char, 1> *Content);

int64_t __real___catalyst__executor__open(const char *Addr);
int64_t __wrap___catalyst__executor__open(const char *Addr) {
  EXPECT_STREQ(Addr, PROGRAM_ADDRESS);
  return __real___catalyst__executor__open(Address.c_str());
}
}

namespace {

class LoweredHostTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string Error;
    Exec = upstream::Executor::start(Error);
    ASSERT_TRUE(Exec) << Error;
    Address = Exec->address();
  }

  std::unique_ptr<upstream::Executor> Exec;
};

// map.c: element I of the output is the low bytes of X * M + I for input
// element X, M = 7 for 4-byte elements and 11 for 8-byte ones.
TEST_F(LoweredHostTest, LaunchesKernelsAndReturnsTheirResults) {
  std::array<int32_t, 9> A;
  std::array<int64_t, 15> B;
  for (size_t I = 0; I < A.size(); ++I)
    A[I] = int32_t(1000 * I - 3);
  for (size_t I = 0; I < B.size(); ++I)
    B[I] = int64_t(I) * 123456789011 - 77;
  std::array<int32_t, 9> RA{};
  std::array<int64_t, 15> RB{};
  auto DA = view<int32_t, 1>(A, {9}), DRA = view<int32_t, 1>(RA, {9});
  auto DB = view<int64_t, 2>(B, {3, 5}), DRB = view<int64_t, 2>(RB, {3, 5});
  _mlir_ciface_launch_map(&DA, &DB, &DRA, &DRB);
  for (size_t I = 0; I < A.size(); ++I)
    EXPECT_EQ(uint32_t(RA[I]), uint32_t(A[I]) * 7u + uint32_t(I)) << "element " << I;
  for (size_t I = 0; I < B.size(); ++I)
    EXPECT_EQ(uint64_t(RB[I]), uint64_t(B[I]) * 11u + I) << "element " << I;
}

// linalg.mlir's mlir_matmul on small integers, exact in doubles.
TEST_F(LoweredHostTest, LaunchesAnMlirLoweredKernel) {
  std::array<double, 6> A, B;
  for (size_t I = 0; I < 6; ++I) {
    A[I] = double(I) + 1;
    B[I] = 10.0 * double(I) - 7;
  }
  std::array<double, 4> C{};
  auto DA = view<double, 2>(A, {2, 3}), DB = view<double, 2>(B, {3, 2});
  auto DC = view<double, 2>(C, {2, 2});
  _mlir_ciface_launch_matmul(&DA, &DB, &DC);
  for (size_t I = 0; I < 2; ++I)
    for (size_t J = 0; J < 2; ++J) {
      double Sum = 0;
      for (size_t K = 0; K < 3; ++K)
        Sum += A[I * 3 + K] * B[K * 2 + J];
      EXPECT_EQ(C[I * 2 + J], Sum) << "element " << I << "," << J;
    }
}

TEST_F(LoweredHostTest, AwaitsAsyncLaunchesAndCallsWrappers) {
  std::array<int64_t, 1> Ticks{-1};
  std::array<uint8_t, 8> In{1, 2, 3, 4, 5, 6, 7, 8}, Reversed{};
  auto DT = view<int64_t, 1>(Ticks, {1});
  auto DI = view<uint8_t, 1>(In, {8}), DR = view<uint8_t, 1>(Reversed, {8});
  _mlir_ciface_tick_and_call(&DT, &DI, &DR);
  // Both launches ran, each once, before the count was read.
  EXPECT_EQ(Ticks[0], 2);
  for (size_t I = 0; I < In.size(); ++I)
    EXPECT_EQ(Reversed[I], In[In.size() - 1 - I]) << "byte " << I;
}

TEST_F(LoweredHostTest, ShipsAnAssetTheExecutorSideReads) {
  std::ifstream File(ASSET_PATH, std::ios::binary);
  std::string Expected((std::istreambuf_iterator<char>(File)), std::istreambuf_iterator<char>());
  ASSERT_EQ(Expected.size(), size_t(ASSET_SIZE));
  std::array<char, sizeof(ASSET_NAME) - 1> Name;
  std::memcpy(Name.data(), ASSET_NAME, Name.size());
  std::array<char, ASSET_SIZE> Content{};
  auto DN = view<char, 1>(Name, {int64_t(Name.size())});
  auto DC = view<char, 1>(Content, {int64_t(Content.size())});
  _mlir_ciface_asset(&DN, &DC);
  EXPECT_EQ(std::string(Content.data(), Content.size()), Expected);
}

} // namespace
