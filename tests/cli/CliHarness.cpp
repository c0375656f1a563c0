//===- CliHarness.cpp - Driving catalyst-remote from tests ----------------===//

#include "CliHarness.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace catalyst::remote::test {

CommandResult runCli(const std::vector<std::string> &Args, const std::vector<std::string> &Env,
                     std::chrono::milliseconds Timeout) {
  // env(1) adds to the environment without touching this process's own.
  std::vector<std::string> Argv = {"/usr/bin/env"};
  Argv.insert(Argv.end(), Env.begin(), Env.end());
  Argv.push_back(CATALYST_REMOTE_CLI_PATH);
  Argv.insert(Argv.end(), Args.begin(), Args.end());
  return runCommand(Argv, Timeout);
}

::testing::AssertionResult failedWithOneLine(const CommandResult &R, int Status,
                                             const std::vector<std::string> &Words) {
  auto Fail = [&](const std::string &Why) {
    return ::testing::AssertionFailure() << Why << "; status " << R.ExitStatus << ", output:\n"
                                         << R.Output;
  };
  if (R.ExitStatus != Status)
    return Fail("expected status " + std::to_string(Status));
  if (R.Output.rfind("catalyst-remote: ", 0) != 0)
    return Fail("the line does not start with 'catalyst-remote: '");
  if (R.Output.find('\n') != R.Output.size() - 1)
    return Fail("not exactly one line");
  for (const std::string &W : Words)
    if (R.Output.find(W) == std::string::npos)
      return Fail("'" + W + "' is not mentioned");
  return ::testing::AssertionSuccess();
}

std::string npyHeaderText(const NpySpec &S) {
  std::ostringstream Shape;
  Shape << "(";
  for (size_t I = 0; I < S.Shape.size(); ++I)
    Shape << (I ? ", " : "") << S.Shape[I];
  Shape << (S.Shape.size() == 1 ? ",)" : ")");
  return "{'descr': '" + S.Descr + "', 'fortran_order': " + (S.Fortran ? "True" : "False") +
         ", 'shape': " + Shape.str() + ", }";
}

std::string npyBytes(const NpySpec &S) {
  std::string Dict = npyHeaderText(S);
  size_t Prefix = S.Version == 1 ? 10 : 12;
  size_t Total = Prefix + Dict.size() + 1;
  Dict.append((64 - Total % 64) % 64, ' ');
  Dict += '\n';
  std::string Out = "\x93NUMPY";
  Out += char(S.Version);
  Out += '\0';
  uint32_t Len = uint32_t(Dict.size());
  for (size_t I = 0; I < Prefix - 8; ++I)
    Out += char((Len >> (8 * I)) & 0xff);
  return Out + Dict + S.Data;
}

void writeFile(const std::string &Path, const std::string &Bytes) {
  std::ofstream F(Path, std::ios::binary);
  F.write(Bytes.data(), std::streamsize(Bytes.size()));
  ASSERT_TRUE(F.good()) << "cannot write " << Path;
}

std::string readWhole(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  std::stringstream S;
  S << F.rdbuf();
  return S.str();
}

::testing::AssertionResult readToolNpy(const std::string &Path, NpySpec &Out) {
  std::string B = readWhole(Path);
  if (B.size() < 10 || B.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) != 0)
    return ::testing::AssertionFailure() << Path << ": no version 1.0 .npy preamble";
  size_t Len = uint8_t(B[8]) | size_t(uint8_t(B[9])) << 8;
  if (10 + Len > B.size() || (10 + Len) % 64 != 0)
    return ::testing::AssertionFailure() << Path << ": header length " << Len;
  std::string Header = B.substr(10, Len);
  static const std::regex Dict(
      R"(\{'descr': '([<|][a-z][0-9]+)', 'fortran_order': False, 'shape': \(([0-9, ]*)\), \} *\n)");
  std::smatch M;
  if (!std::regex_match(Header, M, Dict))
    return ::testing::AssertionFailure() << Path << ": header " << Header;
  Out = {};
  Out.Descr = M[1];
  std::istringstream Dims(M[2].str());
  std::string Dim;
  while (std::getline(Dims, Dim, ','))
    if (Dim.find_first_not_of(' ') != std::string::npos)
      Out.Shape.push_back(std::stoll(Dim));
  Out.Data = B.substr(10 + Len);
  return ::testing::AssertionSuccess();
}

const std::vector<TestDType> &allDTypes() {
  static const std::vector<TestDType> All = {
      {"bool", "bool", "|b1", 1},     {"int8", "i8", "|i1", 1},
      {"int16", "i16", "<i2", 2},     {"int32", "i32", "<i4", 4},
      {"int64", "i64", "<i8", 8},     {"uint8", "u8", "|u1", 1},
      {"uint16", "u16", "<u2", 2},    {"uint32", "u32", "<u4", 4},
      {"uint64", "u64", "<u8", 8},    {"float16", "f16", "<f2", 2},
      {"float32", "f32", "<f4", 4},   {"float64", "f64", "<f8", 8},
      {"complex64", "c64", "<c8", 8}, {"complex128", "c128", "<c16", 16},
  };
  return All;
}

int64_t elementCount(const std::vector<int64_t> &Shape) {
  int64_t N = 1;
  for (int64_t D : Shape)
    N *= D;
  return N;
}

std::string randomValues(int64_t N, size_t Bytes, bool Boolean, std::mt19937_64 &Rng) {
  std::string Out(size_t(N) * Bytes, '\0');
  for (char &C : Out)
    C = char(Boolean ? Rng() % 2 : Rng());
  return Out;
}

std::string fortranToC(const std::string &Data, const std::vector<int64_t> &Shape, size_t Bytes) {
  size_t Rank = Shape.size();
  std::string Out(Data.size(), '\0');
  std::vector<int64_t> Idx(Rank, 0);
  for (int64_t I = 0, N = elementCount(Shape); I < N; ++I) {
    int64_t At = 0, Stride = 1;
    for (size_t D = 0; D < Rank; ++D) {
      At += Idx[D] * Stride;
      Stride *= Shape[D];
    }
    std::memcpy(&Out[size_t(I) * Bytes], &Data[size_t(At) * Bytes], Bytes);
    for (size_t D = Rank; D-- > 0;) {
      if (++Idx[D] < Shape[D])
        break;
      Idx[D] = 0;
    }
  }
  return Out;
}

} // namespace catalyst::remote::test
