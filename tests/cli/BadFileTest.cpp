//===- BadFileTest.cpp - .npy files that cannot be used -------------------===//
//
// A file is read as a hostile one: each malformed, truncated or unsupported
// kind gets one line naming the file and what is wrong, exit status 1, and
// no output written; nothing of it reaches the executor.
//
//===----------------------------------------------------------------------===//

#include "CliHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"

#include <filesystem>
#include <gtest/gtest.h>

using namespace catalyst::remote::test;

namespace {

struct BadFile {
  const char *Name;
  std::string Bytes;
  const char *Says;
};

std::string preamble(int Major, uint32_t HeaderLength) {
  std::string P = std::string("\x93NUMPY", 6) + char(Major) + '\0';
  for (int I = 0; I < (Major == 1 ? 2 : 4); ++I)
    P += char((HeaderLength >> (8 * I)) & 0xff);
  return P;
}

// A version 1 file with Dict as its header and Data after it.
std::string withHeader(const std::string &Dict, const std::string &Data = std::string(48, '\1')) {
  std::string Text = Dict + "\n";
  return preamble(1, uint32_t(Text.size())) + Text + Data;
}

// "1, 1, ..., 1, " of N dimensions.
std::string ones(int N) {
  std::string S;
  for (int I = 0; I < N; ++I)
    S += "1, ";
  return S;
}

std::vector<BadFile> badFiles() {
  std::string Good = npyBytes({"<f8", false, {2, 3}, std::string(48, '\1')});
  return {
      {"empty", "", "empty"},
      {"not npy", "PK\x03\x04 a zip file, say", "not an .npy file"},
      {"cut in the magic", "\x93NUM", "truncated"},
      {"cut in the preamble", std::string("\x93NUMPY\x01\x00\x40", 9), "truncated"},
      {"version 4", preamble(4, 10) + "{}", "unknown .npy version 4.0"},
      {"version 1.1", std::string("\x93NUMPY\x01\x01", 8) + "\x10", "unknown .npy version 1.1"},
      {"header past the end", preamble(1, 200) + "{'descr': '<f8'",
       "truncated: its header claims 200"},
      {"huge header", preamble(2, 0xffffffffu) + "{", "more than 1048576 is refused"},
      {"data cut short", Good.substr(0, Good.size() - 5), "truncated: its shape needs 48 bytes"},
      {"data left over", Good + "xyz", "3 bytes follow"},
      {"no dictionary", withHeader("['descr', '<f8']"), "expected '{'"},
      {"missing shape", withHeader("{'descr': '<f8', 'fortran_order': False}"), "no 'shape' key"},
      {"unknown key",
       withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), "
                  "'x': 1}"),
       "unknown key 'x'"},
      {"key twice",
       withHeader("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, "
                  "'shape': (6,)}"),
       "'descr' appears twice"},
      {"unterminated string", withHeader("{'descr': '<f8"), "unterminated string"},
      {"text after", withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (6,)} x"),
       "text after the dictionary"},
      {"fortran_order not a bool",
       withHeader("{'descr': '<f8', 'fortran_order': 0, 'shape': (6,)}"), "expected True or False"},
      {"negative dimension", withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (-6,)}"),
       "expected a dimension"},
      {"dimension past 2^63",
       withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775808,)}"),
       "expected a dimension"},
      {"shape overflows",
       withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"),
       "overflows"},
      {"empty yet its strides overflow",
       withHeader("{'descr': '<u1', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296)}",
                  ""),
       "overflows"},
      {"65 dimensions",
       withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (" + ones(65) + ")}"),
       "more than 64 dimensions"},
      {"big-endian", withHeader("{'descr': '>f8', 'fortran_order': False, 'shape': (6,)}"),
       "big-endian"},
      {"no byte order", withHeader("{'descr': '|f8', 'fortran_order': False, 'shape': (6,)}"),
       "does not say its byte order"},
      {"objects", withHeader("{'descr': '|O', 'fortran_order': False, 'shape': (6,)}"),
       "Python objects"},
      {"structured", withHeader("{'descr': [('x', '<f8')], 'fortran_order': False, 'shape': (6,)}"),
       "structured"},
      {"text", withHeader("{'descr': '<U6', 'fortran_order': False, 'shape': (2,)}"), "holds text"},
      {"dates", withHeader("{'descr': '<M8[s]', 'fortran_order': False, 'shape': (6,)}"),
       "holds dates"},
      {"long double", withHeader("{'descr': '<f16', 'fortran_order': False, 'shape': (3,)}"),
       "no type a memref carries"},
  };
}

class BadFileTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_TRUE(Exec.start()); }
  ExecutorProcess Exec;
};

TEST_F(BadFileTest, EachGetsOneLineNamingTheFileAndWhatIsWrong) {
  for (const BadFile &B : badFiles()) {
    SCOPED_TRACE(B.Name);
    TempDir Dir;
    std::string Path = Dir.path("in.npy");
    writeFile(Path, B.Bytes);
    CommandResult R = runCli({"run", Exec.address(), kernelObject("copy"), "copy_r1_e8", "--in",
                              Path, "--out", "f64:1", "--out-dir", Dir.dir()});
    EXPECT_TRUE(failedWithOneLine(R, 1, {Path + ": ", B.Says}));
    EXPECT_FALSE(std::filesystem::exists(Dir.path("out0.npy")));
  }
}

// The first bad file among several is the one named; nothing was launched.
TEST_F(BadFileTest, TheFileNamedIsTheBadOne) {
  TempDir Dir;
  writeFile(Dir.path("good.npy"), npyBytes({"<f8", false, {2}, std::string(16, '\0')}));
  writeFile(Dir.path("bad.npy"), withHeader("{'descr': '>f8', 'fortran_order': False, "
                                            "'shape': (6,)}"));
  CommandResult R = runCli({"run", Exec.address(), kernelObject("copy"), "copy_r1_e8", "--in",
                            Dir.path("good.npy"), "--in", Dir.path("bad.npy"), "--out", "f64:1",
                            "--out-dir", Dir.dir()});
  EXPECT_TRUE(failedWithOneLine(R, 1, {Dir.path("bad.npy"), "big-endian"}));
  EXPECT_EQ(R.Output.find("good.npy"), std::string::npos);
}

TEST_F(BadFileTest, MissingAndUnreadableFiles) {
  TempDir Dir;
  CommandResult R = runCli({"run", Exec.address(), kernelObject("copy"), "copy_r1_e8", "--in",
                            Dir.path("nowhere.npy"), "--out", "f64:1"});
  EXPECT_TRUE(failedWithOneLine(R, 1, {Dir.path("nowhere.npy"), "cannot open"}));
  R = runCli({"run", Exec.address(), kernelObject("copy"), "copy_r1_e8", "--in", Dir.dir(), "--out",
              "f64:1"});
  EXPECT_TRUE(failedWithOneLine(R, 1, {Dir.dir(), "not a regular file"}));
}

} // namespace
