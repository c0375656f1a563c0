//===- TempDir.cpp - A private folder for one test ------------------------===//

#include "TempDir.h"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>

namespace catalyst::remote::test {

TempDir::TempDir() {
  std::string Pattern = (std::filesystem::temp_directory_path() / "crtestXXXXXX").string();
  if (::mkdtemp(Pattern.data()))
    Dir = Pattern;
  else
    ADD_FAILURE() << "mkdtemp failed";
}

TempDir::~TempDir() {
  std::error_code EC;
  if (!Dir.empty())
    std::filesystem::remove_all(Dir, EC);
}

} // namespace catalyst::remote::test
