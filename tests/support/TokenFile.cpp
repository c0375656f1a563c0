//===- TokenFile.cpp - A token file for one test --------------------------===//

#include "TokenFile.h"

#include "Command.h"
#include "ExecutorProcess.h"
#include "Procfs.h"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>

namespace catalyst::remote::test {

TokenFile::TokenFile() {
  std::string Pattern = (std::filesystem::temp_directory_path() / "crtokenXXXXXX").string();
  if (!::mkdtemp(Pattern.data())) {
    ADD_FAILURE() << "mkdtemp failed";
    return;
  }
  Dir = Pattern;
  Path = Dir + "/token";
  CommandResult R = runCommand({executorPath(), "--new-token", Path});
  EXPECT_EQ(R.ExitStatus, 0) << R.Output;
  Secret = readFile(Path);
  while (!Secret.empty() && std::isspace(static_cast<unsigned char>(Secret.back())))
    Secret.pop_back();
  EXPECT_EQ(Secret.size(), 64u) << "a 256-bit secret in hex";
}

TokenFile::~TokenFile() {
  std::error_code EC;
  if (!Dir.empty())
    std::filesystem::remove_all(Dir, EC);
}

} // namespace catalyst::remote::test
