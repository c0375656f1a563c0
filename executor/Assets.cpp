//===- Assets.cpp - Files a host stores beside its kernels ----------------===//

#include "Assets.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <unistd.h>

using namespace llvm;
namespace fs = std::filesystem;

namespace catalyst::remote::executor {

std::string assetDirectory(int Pid) {
  return (fs::temp_directory_path() / "catalyst-assets" / std::to_string(Pid)).string();
}

std::string assetDirectory() {
  return assetDirectory(::getpid());
}

static Error assetError(const fs::path &P, const Twine &What, std::error_code EC) {
  return createStringError(EC, "asset %s: %s: %s", P.c_str(), What.str().c_str(),
                           EC.message().c_str());
}

static Error writeFile(const fs::path &P, ArrayRef<char> Bytes) {
  FILE *F = std::fopen(P.c_str(), "wb");
  if (!F)
    return assetError(P, "cannot create", std::error_code(errno, std::generic_category()));
  size_t Written = std::fwrite(Bytes.data(), 1, Bytes.size(), F);
  int WriteErr = Written == Bytes.size() ? 0 : errno;
  if (std::fclose(F) != 0 && !WriteErr)
    WriteErr = errno;
  if (WriteErr)
    return assetError(P, "cannot write", std::error_code(WriteErr, std::generic_category()));
  return Error::success();
}

Error storeAsset(ArrayRef<char> Bytes, StringRef Name) {
  fs::path File = fs::path(Name.str()).filename();
  if (File.empty() || File == "." || File == "..")
    return createStringError(inconvertibleErrorCode(), "asset name '%s' has no file name",
                             Name.str().c_str());
  fs::path Dir = assetDirectory();
  std::error_code EC;
  fs::create_directories(Dir, EC);
  if (EC)
    return assetError(Dir, "cannot create directory", EC);
  static std::atomic<uint64_t> Counter{0};
  fs::path Tmp = Dir / ("." + File.string() + ".tmp." + std::to_string(Counter++));
  if (auto Err = writeFile(Tmp, Bytes)) {
    fs::remove(Tmp, EC);
    return Err;
  }
  fs::rename(Tmp, Dir / File, EC);
  if (EC) {
    Error Err = assetError(Dir / File, "cannot rename into place", EC);
    fs::remove(Tmp, EC);
    return Err;
  }
  return Error::success();
}

void removeAssets(int Pid) {
  std::error_code EC;
  fs::remove_all(assetDirectory(Pid), EC);
}

void removeAssets() {
  removeAssets(::getpid());
}

} // namespace catalyst::remote::executor
