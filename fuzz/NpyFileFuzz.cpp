//===- NpyFileFuzz.cpp - catalyst-remote reading any file as .npy ---------===//
//
// Input: a file's bytes. The reader must refuse it with an error or accept
// it with exactly the values its shape says, which are the file's last
// bytes; an accepted header, written out and parsed again, is the same.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"
#include "NpyHeader.h"

#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace catalyst::remote::cli;

namespace {

// The file the reader opens, in memory: the same path every run.
const std::string &inputPath() {
  static const std::string Path = "/proc/self/fd/" + std::to_string(::memfd_create("npy", 0));
  return Path;
}

bool writeInput(const uint8_t *Data, size_t Size) {
  static const int Fd = std::stoi(inputPath().substr(inputPath().rfind('/') + 1));
  return ::ftruncate(Fd, 0) == 0 && ::pwrite(Fd, Data, Size, 0) == ssize_t(Size);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (!writeInput(Data, Size))
    __builtin_trap();
  auto A = readNpy(inputPath());
  if (!A) {
    llvm::consumeError(A.takeError()); // refusing is a fine answer
    return 0;
  }
  auto Bytes = byteCount(A->Type, A->Shape);
  if (!Bytes || *Bytes != A->Data.size() || *Bytes > Size ||
      std::memcmp(A->Data.data(), Data + Size - *Bytes, *Bytes) != 0)
    __builtin_trap();
  NpyHeader H{A->Type.descr(), A->FortranOrder, A->Shape};
  auto Again = parseNpyHeader(formatNpyHeader(H));
  if (!Again || Again->Descr != H.Descr || Again->FortranOrder != H.FortranOrder ||
      Again->Shape != H.Shape)
    __builtin_trap();
  return 0;
}
