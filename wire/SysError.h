//===- SysError.h - A failed system call as an Error -------------*- C++ -*-===//

#ifndef CATALYST_REMOTE_WIRE_SYSERROR_H
#define CATALYST_REMOTE_WIRE_SYSERROR_H

#include "llvm/Support/Error.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

namespace catalyst::remote::wire {

// "What: <the system's reason>", carrying Errno.
inline llvm::Error sysError(const llvm::Twine &What, int Errno) {
  return llvm::createStringError(std::error_code(Errno, std::generic_category()),
                                 What + ": " + std::strerror(Errno));
}

// A file's permission bits as chmod takes them ("0640"), for messages.
inline std::string fileMode(unsigned Mode) {
  char Buf[16];
  std::snprintf(Buf, sizeof(Buf), "0%o", Mode & 07777);
  return Buf;
}

} // namespace catalyst::remote::wire

#endif
