//===- CopyCountTest.cpp - User-space payload copies, per strategy --------===//
//
// Zerocopy moves dense memrefs between memref buffers and the socket without
// copying a byte in user space on either side; only views that are not
// dense row-major get packed: inputs by the host, on the fly (but a
// transpose of a dense array goes as that array, and the executor transposes
// it as it lands), outputs by the executor. The counters say exactly how many bytes were copied, so
// these tests compare them with the bytes of exactly the memrefs that needed it. Over shared memory
// every payload byte is copied once by the host each way (into the shared slab, out of it), and an
// output by the executor unless it already lies in shared memory. Batched and naive serialize
// everything, so they must report copies.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"

#include <iterator>
#include <tuple>

using namespace catalyst::remote::test;

namespace {

uint64_t bytesOf(const Desc &D) {
  return uint64_t(D.numElements()) * D.elemSize();
}

// One input through one kernel; which side must pack.
struct CopyCase {
  const char *Name;
  const char *File;
  const char *Entry;
  Layout InputLayout;
  size_t ElemSize;
  bool HostPacks;     // the input is not dense row-major
  bool ExecutorPacks; // the kernel returns a view that is not dense row-major
  bool SourceOrder;   // the input is a transposed dense array (wire/SourceOrder.h)
};

void PrintTo(const CopyCase &C, std::ostream *OS) {
  *OS << C.Name;
}

const CopyCase CopyCases[] = {
    {"DenseInDenseOut", "map", "map_r2_e4", Layout::Dense, 4, false, false, false},
    // An offset moves the start; the values are still one contiguous run.
    {"OffsetInDenseOut", "map", "map_r2_e4", Layout::Offset, 4, false, false, false},
    {"TransposedInDenseOut", "map", "map_r2_e4", Layout::Transposed, 4, true, false, true},
    {"StridedInDenseOut", "map", "map_r2_e4", Layout::Strided, 4, true, false, false},
    {"BroadcastInDenseOut", "map", "map_r2_e4", Layout::Broadcast, 4, true, false, false},
    // relayout returns a column-major, every-other-element view.
    {"DenseInStridedOut", "relayout", "relayout_r2_e4", Layout::Dense, 4, false, true, false},
    {"TransposedInStridedOut", "relayout", "relayout_r2_e4", Layout::Transposed, 4, true, true,
     true},
    // reverse returns a view with negative strides.
    {"DenseInReversedOut", "reverse", "reverse_r2_e8", Layout::Dense, 8, false, true, false},
};

using CopyParam = std::tuple<Mode, CopyCase>;

class ZeroCopyCopiesTest : public CapiTest, public ::testing::WithParamInterface<CopyParam> {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(startAndOpen(std::get<0>(GetParam())));
    ASSERT_NO_FATAL_FAILURE(sendKernel(std::get<1>(GetParam()).File));
  }
};

// Over TCP, exactly the bytes of the memrefs that must be packed, by the
// side that packs them: the executor for an input in source order. Over
// shared memory the host writes the input into the shared slab (packing it
// there when it must) and copies the output out; the executor copies each
// of these kernels' outputs (fresh buffers) into its output area, packing
// the views.
TEST_P(ZeroCopyCopiesTest, ExactlyTheBytesThatMustBeCopied) {
  auto [M, C] = GetParam();
  std::mt19937_64 Rng(3);
  auto In = makeInput(C.InputLayout, {48, 33}, C.ElemSize, Rng);
  ASSERT_TRUE(checkLaunch(Session.get(), C.File, C.Entry, {&In->D}, {{2, C.ElemSize}}));
  // Every kernel here returns as many elements as it was given.
  uint64_t Bytes = bytesOf(In->D);
  auto S = lastLaunch(Session.get());
  if (overShm(M)) {
    EXPECT_EQ(S.host_copy_bytes, 2 * Bytes);
    EXPECT_EQ(S.executor_copy_bytes, Bytes);
    EXPECT_LT(S.bytes_sent + S.bytes_received, Bytes) << "payloads do not cross the socket";
    return;
  }
  EXPECT_EQ(S.host_copy_bytes, C.HostPacks && !C.SourceOrder ? Bytes : 0);
  EXPECT_EQ(S.executor_copy_bytes, (C.ExecutorPacks ? Bytes : 0) + (C.SourceOrder ? Bytes : 0));
}

INSTANTIATE_TEST_SUITE_P(ZeroCopy, ZeroCopyCopiesTest,
                         ::testing::Combine(::testing::Values(Mode::ZeroCopy, Mode::ZeroCopyShm),
                                            ::testing::ValuesIn(CopyCases)),
                         [](const auto &Info) {
                           return std::string(modeName(std::get<0>(Info.param))) + "_" +
                                  std::get<1>(Info.param).Name;
                         });

// An output that is its input, dense, is in shared memory already: the
// executor names its place and copies nothing; a strided view of the input
// is packed, a fresh buffer copied.
TEST_F(CapiTest, SharedInputHandedBackIsNotCopiedByTheExecutor) {
  ASSERT_NO_FATAL_FAILURE(startAndOpen(Mode::ZeroCopyShm));
  ASSERT_NO_FATAL_FAILURE(sendKernel("alias"));
  std::mt19937_64 Rng(8);
  constexpr int64_t N = 1000;
  auto In = makeInput(Layout::Dense, {N}, 4, Rng);
  ASSERT_TRUE(
      checkLaunch(Session.get(), "alias", "alias_input", {&In->D}, {{1, 4}, {1, 4}, {1, 4}}));
  auto S = lastLaunch(Session.get());
  uint64_t Same = 4 * N, Odd = 4 * (N / 2), Fresh = 4 * N;
  EXPECT_EQ(S.executor_copy_bytes, Odd + Fresh);
  EXPECT_EQ(S.host_copy_bytes, 4 * N + Same + Odd + Fresh);
}

class ZeroCopyManyInputsTest : public CapiTest {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(startAndOpen(Mode::ZeroCopy));
    ASSERT_NO_FATAL_FAILURE(sendKernel("concat"));
  }
};

// Only the inputs that need packing count, each with its own bytes.
TEST_F(ZeroCopyManyInputsTest, OnlyNonDenseInputsAreCopied) {
  std::mt19937_64 Rng(9);
  const Layout Layouts[] = {Layout::Dense, Layout::Strided, Layout::Offset, Layout::Reversed,
                            Layout::ZeroSize};
  std::vector<std::unique_ptr<Input>> Ins;
  std::vector<Input *> Raw;
  uint64_t Packed = 0;
  for (size_t K = 0; K < std::size(Layouts); ++K) {
    Ins.push_back(makeInput(Layouts[K], {int64_t(1000 + 77 * K)}, 1, Rng));
    Raw.push_back(Ins.back().get());
    if (Layouts[K] == Layout::Strided || Layouts[K] == Layout::Reversed)
      Packed += bytesOf(Ins.back()->D);
  }
  ASSERT_GT(Packed, 0u);
  ASSERT_TRUE(checkLaunch(Session.get(), "concat", "concat_5", inputsOf(Raw), {{1, 1}}));
  auto S = lastLaunch(Session.get());
  EXPECT_EQ(S.host_copy_bytes, Packed);
  EXPECT_EQ(S.executor_copy_bytes, 0u);
}

// Batched and naive put payloads into messages and take them out again, so
// each side copies at least every payload byte it handles: the host the
// input (serializing) and the output (into its buffer), the executor the
// input (into place) and the output (serializing).
class SerializingCopiesTest : public ModeTest {};

TEST_P(SerializingCopiesTest, DenseMemrefsAreStillCopied) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
  std::mt19937_64 Rng(5);
  auto In = makeInput(Layout::Dense, {48, 33}, 4, Rng);
  ASSERT_TRUE(checkLaunch(Session.get(), "map", "map_r2_e4", {&In->D}, {{2, 4}}));
  uint64_t InAndOut = 2 * bytesOf(In->D);
  auto S = lastLaunch(Session.get());
  EXPECT_GE(S.host_copy_bytes, InAndOut);
  EXPECT_GE(S.executor_copy_bytes, InAndOut);
}

const Mode SerializingModes[] = {Mode::Batched, Mode::Naive, Mode::UpstreamOnly, Mode::BatchedShm,
                                 Mode::NaiveShm};
INSTANTIATE_TEST_SUITE_P(Serializing, SerializingCopiesTest, ::testing::ValuesIn(SerializingModes),
                         modeTestName);

} // namespace
