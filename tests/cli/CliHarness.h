//===- CliHarness.h - Driving catalyst-remote from tests --------*- C++ -*-===//
//
// The tests run the installed-to-be binary as a user would, against a real
// executor, and write their .npy files byte by byte themselves, so that
// neither the tool's reader nor its writer checks itself.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_CLIHARNESS_H
#define CATALYST_REMOTE_TESTS_CLIHARNESS_H

#include "Command.h"
#include "TempDir.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

namespace catalyst::remote::test {

// Runs catalyst-remote with Args; Env entries (NAME=VALUE) are added to its
// environment.
CommandResult runCli(const std::vector<std::string> &Args, const std::vector<std::string> &Env = {},
                     std::chrono::milliseconds Timeout = std::chrono::seconds(30));

// The tool failed as it promises: status Status and exactly one line, which
// starts "catalyst-remote: " and mentions each of Words.
::testing::AssertionResult failedWithOneLine(const CommandResult &R, int Status,
                                             const std::vector<std::string> &Words);

// An .npy file as NumPy writes it: Data is the values in the order that
// Fortran says, the header padded to 64 bytes. Version 1, 2 or 3.
struct NpySpec {
  std::string Descr;
  bool Fortran = false;
  std::vector<int64_t> Shape;
  std::string Data;
  int Version = 1;
};
std::string npyBytes(const NpySpec &S);
std::string npyHeaderText(const NpySpec &S);
void writeFile(const std::string &Path, const std::string &Bytes);
std::string readWhole(const std::string &Path);

// Reads a file the tool wrote, checking its format closely (version 1.0,
// C order, data 64-byte aligned, nothing after the data).
::testing::AssertionResult readToolNpy(const std::string &Path, NpySpec &Out);

// The element type's properties for tests: NumPy's type string and names.
struct TestDType {
  const char *Name, *Short, *Descr;
  size_t Bytes;
};
const std::vector<TestDType> &allDTypes();

// Element count of Shape.
int64_t elementCount(const std::vector<int64_t> &Shape);
// N random elements of Bytes each; booleans are 0 or 1.
std::string randomValues(int64_t N, size_t Bytes, bool Boolean, std::mt19937_64 &Rng);
// Values stored in Fortran order, put into C order.
std::string fortranToC(const std::string &Data, const std::vector<int64_t> &Shape, size_t Bytes);

} // namespace catalyst::remote::test

#endif
