//===- WriteAll.h - Writing every byte to a file ----------------*- C++ -*-===//
//
// write(2) may take fewer bytes than it is given, or be interrupted by a
// signal: files the project writes whole (token files, assets, the
// executor's announcement) go through this one loop.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_WRITEALL_H
#define CATALYST_REMOTE_WIRE_WRITEALL_H

#include "llvm/ADT/ArrayRef.h"

#include <cerrno>
#include <system_error>
#include <unistd.h>

namespace catalyst::remote::wire {

// Writes all of Bytes to Fd; the error of the write that failed, if any.
inline std::error_code writeAll(int Fd, llvm::ArrayRef<char> Bytes) {
  while (!Bytes.empty()) {
    ssize_t N = ::write(Fd, Bytes.data(), Bytes.size());
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return std::error_code(errno, std::generic_category());
    Bytes = Bytes.drop_front(size_t(N));
  }
  return {};
}

} // namespace catalyst::remote::wire

#endif
