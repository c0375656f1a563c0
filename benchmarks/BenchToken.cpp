//===- BenchToken.cpp - A token the benchmark makes for itself ------------===//

#include "BenchToken.h"

#include <cstdlib>
#include <filesystem>

using namespace llvm;

namespace catalyst::remote::bench {

Expected<std::unique_ptr<BenchToken>> BenchToken::make() {
  std::string Pattern = (std::filesystem::temp_directory_path() / "crbenchXXXXXX").string();
  if (!::mkdtemp(Pattern.data()))
    return createStringError(inconvertibleErrorCode(),
                             "cannot make a temporary folder for the benchmark's token");
  std::unique_ptr<BenchToken> T(new BenchToken(Pattern));
  T->Path = T->Dir + "/token";
  if (auto Err = wire::writeNewTokenFile(T->Path))
    return Err;
  auto Secret = wire::readTokenFile(T->Path);
  if (!Secret)
    return Secret.takeError();
  T->Secret = *Secret;
  return T;
}

BenchToken::~BenchToken() {
  std::error_code EC; // a folder left in the temporary directory harms nothing
  std::filesystem::remove_all(Dir, EC);
}

} // namespace catalyst::remote::bench
