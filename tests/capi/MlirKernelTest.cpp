//===- MlirKernelTest.cpp - Kernels lowered from MLIR ---------------------===//
//
// The kernels of tests/kernels/mlir/linalg.mlir, lowered by Debian's MLIR
// tools into linalg.o as Catalyst lowers its programs, run in every mode and
// are compared with the same object called here. They bring what MLIR's
// lowering produces and hand-written kernels only imitate: results
// allocated 64-byte aligned (aligned != allocated), a strided view into a
// larger allocation, results that are the input itself, a rank-0 result and
// a constant global; their inputs are strided views.
//
// Remote outputs must be dense copies in buffers the host owns. Each
// kernel's values are also checked against what the test computes itself:
// a wrong entry would be as wrong locally, and the comparison would pass.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"

#include <malloc.h>
#include <set>

extern "C" {
void _catalyst_pyface_mlir_matmul(void *Rv, void *Av);
void _catalyst_pyface_mlir_transpose_add(void *Rv, void *Av);
void _catalyst_pyface_mlir_window(void *Rv, void *Av);
void _catalyst_pyface_mlir_identity(void *Rv, void *Av);
void _catalyst_pyface_mlir_reduce(void *Rv, void *Av);
}

using namespace catalyst::remote::test;

namespace {

// Enough launches that freeing a view's allocation twice, or freeing an
// input or a constant global, brings the connection process down.
constexpr int Repeats = 20;

// A launch's outputs, from the executor and from the same object here.
struct Launch {
  explicit Launch(const std::vector<OutSpec> &Specs) : Remote(Specs), Local(Specs) {}
  Outputs Remote, Local;
};

// An input laid out as L whose elements are small integers, so that sums
// and products are exact and the test can compute them itself.
template <typename T>
std::unique_ptr<Input> smallValues(Layout L, std::vector<int64_t> Sizes, std::mt19937_64 &Rng) {
  auto In = makeInput(L, std::move(Sizes), sizeof(T), Rng);
  for (size_t I = 0; I < In->Buf.size() / sizeof(T); ++I) {
    T V = T(int(Rng() % 19) - 9);
    std::memcpy(In->Buf.data() + I * sizeof(T), &V, sizeof(T));
  }
  return In;
}

// Each remote output is a buffer the host's malloc handed out, large enough
// for its values, and no input's or other output's: an address in the
// executor, or an input's, would not do.
void expectHostOwned(const Outputs &Out, const InputList &Inputs) {
  std::set<void *> Seen;
  for (size_t I = 0; I < Out.size(); ++I) {
    void *P = Out[I].allocated();
    ASSERT_NE(reinterpret_cast<uintptr_t>(P), ConstantMarker) << "output " << I;
    for (const Desc *In : Inputs)
      EXPECT_NE(P, In->allocated()) << "output " << I << " is an input's buffer";
    EXPECT_TRUE(Seen.insert(P).second) << "output " << I << " shares a buffer";
    EXPECT_GE(malloc_usable_size(P), size_t(Out[I].numElements()) * Out[I].elemSize())
        << "output " << I;
  }
}

class MlirKernelTest : public ModeTest {
protected:
  void SetUp() override {
    ModeTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(sendKernel("linalg"));
  }

  // Launches entry Name remotely and Local, its copy here, on Inputs; the
  // remote outputs must be dense, host-owned copies of the local ones.
  void launchBoth(const std::string &Name, PyfaceEntry Local, const InputList &Inputs, Launch &L) {
    for (size_t I = 0; I < L.Remote.size(); ++I)
      L.Remote[I].poison();
    ASSERT_TRUE(launchRemote(Session.get(), remoteEntry(Name), "linalg.o", Inputs, L.Remote))
        << FailureLog::last();
    runLocal(Local, Inputs, L.Local);
    ASSERT_TRUE(sameOutputs(L.Remote, L.Local));
    ASSERT_NO_FATAL_FAILURE(expectHostOwned(L.Remote, Inputs));
  }

  std::mt19937_64 Rng{2024};
};

TEST_P(MlirKernelTest, MatmulOfStridedViews) {
  const std::vector<std::vector<int64_t>> Shapes = {{3, 4, 5}, {1, 7, 2}, {6, 1, 3}, {8, 8, 8}};
  for (const auto &MKN : Shapes) {
    int64_t M = MKN[0], K = MKN[1], N = MKN[2];
    SCOPED_TRACE(describe(MKN));
    auto A = smallValues<double>(Layout::Strided, {M, K}, Rng);
    auto B = smallValues<double>(Layout::Transposed, {K, N}, Rng);
    Launch L({{2, 8}});
    ASSERT_NO_FATAL_FAILURE(
        launchBoth("mlir_matmul", _catalyst_pyface_mlir_matmul, {&A->D, &B->D}, L));
    auto AV = as<double>(A->D.values()), BV = as<double>(B->D.values());
    std::vector<double> Expected(M * N, 0.0);
    for (int64_t I = 0; I < M; ++I)
      for (int64_t J = 0; J < N; ++J)
        for (int64_t P = 0; P < K; ++P)
          Expected[I * N + J] += AV[I * K + P] * BV[P * N + J];
    EXPECT_EQ(L.Remote[0].sizes(), (std::vector<int64_t>{M, N}));
    EXPECT_EQ(as<double>(L.Remote[0].values()), Expected);
  }
}

TEST_P(MlirKernelTest, TransposeAddOfOffsetAndReversedViews) {
  auto A = smallValues<float>(Layout::Offset, {3, 5}, Rng);
  auto B = smallValues<float>(Layout::Reversed, {5, 3}, Rng);
  Launch L({{2, 4}});
  ASSERT_NO_FATAL_FAILURE(
      launchBoth("mlir_transpose_add", _catalyst_pyface_mlir_transpose_add, {&A->D, &B->D}, L));
  auto AV = as<float>(A->D.values()), BV = as<float>(B->D.values());
  std::vector<float> Expected(15);
  for (int I = 0; I < 3; ++I)
    for (int J = 0; J < 5; ++J)
      Expected[I * 5 + J] = AV[I * 5 + J] + BV[J * 3 + I];
  EXPECT_EQ(L.Remote[0].sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(as<float>(L.Remote[0].values()), Expected);
}

// The result views rows 1.. and odd columns of a buffer only it keeps: the
// executor must pack it densely and free the allocation behind it once.
TEST_P(MlirKernelTest, WindowIntoALargerAllocation) {
  auto A = smallValues<float>(Layout::Strided, {5, 7}, Rng);
  auto AV = as<float>(A->D.values());
  std::vector<float> Expected;
  for (int I = 1; I < 5; ++I)
    for (int J = 1; J < 7; J += 2)
      Expected.push_back(3 * AV[I * 7 + J]);
  for (int R = 0; R < Repeats; ++R) {
    Launch L({{2, 4}});
    ASSERT_NO_FATAL_FAILURE(launchBoth("mlir_window", _catalyst_pyface_mlir_window, {&A->D}, L))
        << "launch " << R;
    // Locally, the view MLIR built: offset 7 + 1, strides 7 and 2.
    EXPECT_EQ(L.Local[0].offset(), 8);
    EXPECT_EQ(L.Local[0].strides(), (std::vector<int64_t>{7, 2}));
    EXPECT_EQ(L.Remote[0].sizes(), (std::vector<int64_t>{4, 3}));
    EXPECT_EQ(as<float>(L.Remote[0].values()), Expected);
  }
}

// A result of one kernel fed to the next, as a Catalyst program does: the
// input is MLIR's own view, offset and strided into an aligned allocation.
TEST_P(MlirKernelTest, LocalResultViewAsInput) {
  auto A = smallValues<float>(Layout::Dense, {5, 7}, Rng);
  auto B = smallValues<float>(Layout::Dense, {3, 4}, Rng);
  Outputs View({{2, 4}});
  runLocal(_catalyst_pyface_mlir_window, {&A->D}, View);
  ASSERT_EQ(View[0].sizes(), (std::vector<int64_t>{4, 3}));
  Launch L({{2, 4}});
  ASSERT_NO_FATAL_FAILURE(
      launchBoth("mlir_transpose_add", _catalyst_pyface_mlir_transpose_add, {&View[0], &B->D}, L));
  auto VV = as<float>(View[0].values()), BV = as<float>(B->D.values());
  std::vector<float> Expected(12);
  for (int I = 0; I < 4; ++I)
    for (int J = 0; J < 3; ++J)
      Expected[I * 3 + J] = VV[I * 3 + J] + BV[J * 4 + I];
  EXPECT_EQ(as<float>(L.Remote[0].values()), Expected);
}

// Both results alias the input: the host gets its values in buffers of its
// own, and nobody frees the input on the kernel's behalf.
TEST_P(MlirKernelTest, IdentityHandsBackItsInput) {
  auto A = smallValues<int32_t>(Layout::Strided, {7}, Rng);
  auto Before = as<int32_t>(A->D.values());
  std::vector<int32_t> Odd = {Before[1], Before[3], Before[5]};
  for (int R = 0; R < Repeats; ++R) {
    Launch L({{1, 4}, {1, 4}});
    ASSERT_NO_FATAL_FAILURE(launchBoth("mlir_identity", _catalyst_pyface_mlir_identity, {&A->D}, L))
        << "launch " << R;
    // Locally, the input's own descriptor and a view into its buffer.
    EXPECT_EQ(L.Local[0].aligned(), A->D.aligned());
    EXPECT_EQ(L.Local[0].offset(), A->D.offset());
    EXPECT_EQ(L.Local[1].aligned(), A->D.aligned());
    EXPECT_EQ(L.Local[1].strides(), (std::vector<int64_t>{2 * A->D.stride(0)}));
    EXPECT_EQ(as<int32_t>(L.Remote[0].values()), Before);
    EXPECT_EQ(as<int32_t>(L.Remote[1].values()), Odd);
  }
  EXPECT_EQ(as<int32_t>(A->D.values()), Before);
}

// A rank-0 result, a rank-1 one and a constant global, end to end in rv.
TEST_P(MlirKernelTest, ReduceToRankZeroAndAConstantGlobal) {
  auto A = smallValues<double>(Layout::Transposed, {4, 3}, Rng);
  auto AV = as<double>(A->D.values());
  double Total = 0;
  std::vector<double> Columns(3, 0.0);
  for (int I = 0; I < 4; ++I)
    for (int J = 0; J < 3; ++J) {
      Total += AV[I * 3 + J];
      Columns[J] += AV[I * 3 + J];
    }
  for (int R = 0; R < Repeats; ++R) {
    Launch L({{0, 8}, {1, 8}, {2, 4}});
    ASSERT_NO_FATAL_FAILURE(launchBoth("mlir_reduce", _catalyst_pyface_mlir_reduce, {&A->D}, L))
        << "launch " << R;
    // Locally, MLIR's marker of a constant global.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(L.Local[2].allocated()), ConstantMarker);
    EXPECT_EQ(as<double>(L.Remote[0].values()), std::vector<double>{Total});
    EXPECT_EQ(as<double>(L.Remote[1].values()), Columns);
    EXPECT_EQ(L.Remote[2].sizes(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(as<int32_t>(L.Remote[2].values()),
              (std::vector<int32_t>{11, -22, 33, -44, 55, 0x7fffffff}));
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, MlirKernelTest, ::testing::ValuesIn(AllModes), modeTestName);

// memref.alloc with an alignment really moves aligned past allocated (the
// case the launches above need exercised), at least for some of these
// sizes: where malloc's block happens to be 64-byte aligned already, the two
// are the same.
TEST(MlirKernelLocal, AlignedAllocationsStartPastTheirBlock) {
  std::mt19937_64 Rng(5);
  std::vector<std::unique_ptr<Input>> Kept;
  std::vector<std::unique_ptr<Outputs>> Results;
  size_t Moved = 0;
  for (int64_t N = 1; N <= 8; ++N) {
    Kept.push_back(smallValues<double>(Layout::Dense, {N, N}, Rng));
    Results.push_back(std::make_unique<Outputs>(std::vector<OutSpec>{{2, 8}}));
    runLocal(_catalyst_pyface_mlir_matmul, {&Kept.back()->D, &Kept.back()->D}, *Results.back());
    const Desc &C = (*Results.back())[0];
    auto Allocated = reinterpret_cast<uintptr_t>(C.allocated());
    auto Aligned = reinterpret_cast<uintptr_t>(C.aligned());
    EXPECT_EQ(Aligned % 64, 0u) << "size " << N;
    EXPECT_GE(Aligned, Allocated) << "size " << N;
    EXPECT_LT(Aligned - Allocated, 64u) << "size " << N;
    Moved += Aligned != Allocated;
  }
  EXPECT_GT(Moved, 0u) << "no allocation needed aligning: the case went unexercised";
}

} // namespace
