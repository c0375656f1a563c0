//===- RoundTripTest.cpp - .npy files through a real kernel and back ------===//
//
// Every dtype the C ABI carries, in C and Fortran order, in .npy files of
// each version, goes through catalyst-remote run and a kernel that copies
// its input: the output file must hold the same array, in C order.
//
//===----------------------------------------------------------------------===//

#include "CliHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace catalyst::remote::test;

namespace {

class RoundTripTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_TRUE(Exec.start()); }

  // Runs copy_r<rank>_e<bytes> on In and checks that out0.npy is In's
  // array in C order, with OutName as the --out dtype.
  void expectCopied(const NpySpec &In, const TestDType &T, const std::string &OutName) {
    TempDir Dir;
    writeFile(Dir.path("in.npy"), npyBytes(In));
    std::string Entry = rankSizeEntry("copy", In.Shape.size(), T.Bytes);
    CommandResult R =
        runCli({"run", Exec.address(), kernelObject("copy"), Entry, "--in", Dir.path("in.npy"),
                "--out", OutName + ":" + std::to_string(In.Shape.size()), "--out-dir", Dir.dir()});
    ASSERT_EQ(R.ExitStatus, 0) << R.Output;
    NpySpec Out;
    ASSERT_TRUE(readToolNpy(Dir.path("out0.npy"), Out));
    EXPECT_EQ(Out.Descr, T.Descr);
    EXPECT_EQ(Out.Shape, In.Shape);
    std::string Expected = In.Fortran ? fortranToC(In.Data, In.Shape, T.Bytes) : In.Data;
    EXPECT_TRUE(Out.Data == Expected) << "values differ";
  }

  ExecutorProcess Exec;
  std::mt19937_64 Rng{10};
};

// Shapes of every rank the kernels have, with no dimension alike, so that a
// transposed read cannot pass for a right one.
TEST_F(RoundTripTest, EveryDTypeInBothOrders) {
  const std::vector<std::vector<int64_t>> Shapes = {{7}, {3, 5}, {2, 3, 4}, {2, 3, 1, 5}};
  int Case = 0;
  for (const TestDType &T : allDTypes()) {
    for (bool Fortran : {false, true}) {
      const std::vector<int64_t> &Shape = Shapes[Case % Shapes.size()];
      NpySpec In{T.Descr, Fortran, Shape,
                 randomValues(elementCount(Shape), T.Bytes, T.Bytes == 1 && T.Name[0] == 'b', Rng),
                 1 + Case % 3};
      SCOPED_TRACE(std::string(T.Name) + (Fortran ? " Fortran" : " C") + " version " +
                   std::to_string(In.Version));
      // NumPy's names and the short ones take turns.
      expectCopied(In, T, Case % 2 ? T.Short : T.Name);
      ++Case;
    }
  }
}

TEST_F(RoundTripTest, ScalarsAndEmptyArrays) {
  const TestDType &F64 = allDTypes()[11];
  ASSERT_STREQ(F64.Name, "float64");
  for (const std::vector<int64_t> &Shape :
       std::vector<std::vector<int64_t>>{{}, {0}, {3, 0}, {0, 4, 2}}) {
    for (bool Fortran : {false, true}) {
      SCOPED_TRACE("rank " + std::to_string(Shape.size()) + (Fortran ? " Fortran" : " C"));
      expectCopied({F64.Descr, Fortran, Shape, randomValues(elementCount(Shape), 8, false, Rng)},
                   F64, "f64");
    }
  }
}

// Python 2's NumPy wrote long integers in shapes ("3L"); older NumPy padded
// headers to 16 bytes and some writers not at all; double quotes are
// Python too.
TEST_F(RoundTripTest, HeadersAsOtherWritersWriteThem) {
  const TestDType &I32 = allDTypes()[3];
  std::string Data = randomValues(6, 4, false, Rng);
  const std::string Headers[] = {
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 3L), }",
      "{\"descr\": \"<i4\", \"shape\": (2, 3), \"fortran_order\": False}",
      "{'shape':(2,3),'fortran_order':False,'descr':'<i4'}",
  };
  for (const std::string &Header : Headers) {
    SCOPED_TRACE(Header);
    TempDir Dir;
    std::string Text = Header + "\n";
    std::string File = std::string("\x93NUMPY\x01\x00", 8) + char(Text.size()) + '\0' + Text + Data;
    writeFile(Dir.path("in.npy"), File);
    CommandResult R = runCli({"run", Exec.address(), kernelObject("copy"), "copy_r2_e4", "--in",
                              Dir.path("in.npy"), "--out", "int32:2", "--out-dir", Dir.dir()});
    ASSERT_EQ(R.ExitStatus, 0) << R.Output;
    NpySpec Out;
    ASSERT_TRUE(readToolNpy(Dir.path("out0.npy"), Out));
    EXPECT_EQ(Out.Descr, I32.Descr);
    EXPECT_EQ(Out.Shape, (std::vector<int64_t>{2, 3}));
    EXPECT_TRUE(Out.Data == Data);
  }
}

// Eight inputs of four ranks and five element types, three outputs: each
// file goes to its place in av and each output to its own file.
TEST_F(RoundTripTest, ManyInputsAndOutputsInOrder) {
  TempDir Dir;
  auto I64 = [](std::vector<int64_t> V) {
    return std::string(reinterpret_cast<const char *>(V.data()), V.size() * 8);
  };
  std::vector<int64_t> A = {1, 2, 3}, B = {10, 20, 30}, C = {100, 200, 300}, D = {5, 6, 7};
  int64_t S = 1000;
  std::string M = randomValues(6, 4, false, Rng); // i32[2][3], given in Fortran order
  std::string Bytes = randomValues(8, 1, false, Rng);
  std::string Wide = randomValues(2, 16, false, Rng);
  const std::pair<const char *, NpySpec> Files[] = {
      {"a", {"<i8", false, {3}, I64(A)}},
      {"b", {"<i8", false, {3}, I64(B)}},
      {"c", {"<i8", false, {3}, I64(C)}},
      {"d", {"<i8", false, {3}, I64(D)}},
      {"m", {"<i4", true, {2, 3}, M}},
      {"s", {"<i8", false, {}, I64({S})}},
      {"bytes", {"|u1", false, {2, 2, 2}, Bytes}},
      {"wide", {"<c16", false, {2}, Wide}},
  };
  std::vector<std::string> Args = {"run", Exec.address(), kernelObject("multi"),
                                   "_catalyst_pyface_multi"};
  for (const auto &[Name, Spec] : Files) {
    writeFile(Dir.path(std::string(Name) + ".npy"), npyBytes(Spec));
    Args.insert(Args.end(), {"--in", Dir.path(std::string(Name) + ".npy")});
  }
  Args.insert(Args.end(), {"--out", "i64:1", "--out", "int32:2", "--out", "int64:0", "--out-dir",
                           Dir.path("outs")});
  CommandResult R = runCli(Args);
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;

  NpySpec Sum, Mt, Total;
  ASSERT_TRUE(readToolNpy(Dir.path("outs/out0.npy"), Sum));
  ASSERT_TRUE(readToolNpy(Dir.path("outs/out1.npy"), Mt));
  ASSERT_TRUE(readToolNpy(Dir.path("outs/out2.npy"), Total));
  EXPECT_EQ(Sum.Data, I64({1116, 1228, 1340}));
  // m was 2x3 (Fortran order in the file); its transpose is 3x2 in C order,
  // which is m's Fortran-order bytes as they lie.
  EXPECT_EQ(Mt.Shape, (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(Mt.Data == M);
  uint64_t Expected = 0;
  for (char Byte : Bytes)
    Expected += uint8_t(Byte);
  for (int K = 0; K < 2; ++K) {
    uint64_t Low;
    std::memcpy(&Low, &Wide[size_t(K) * 16], 8);
    Expected += Low;
  }
  EXPECT_EQ(Total.Shape, std::vector<int64_t>{});
  EXPECT_EQ(Total.Data, I64({int64_t(Expected)}));
}

} // namespace
