//===- SysError.h - A failed system call as an Error -------------*- C++ -*-===//

#ifndef CATALYST_REMOTE_WIRE_SYSERROR_H
#define CATALYST_REMOTE_WIRE_SYSERROR_H

#include "llvm/Support/Error.h"

#include <cstring>
#include <system_error>

namespace catalyst::remote::wire {

// "What: <the system's reason>", carrying Errno.
inline llvm::Error sysError(const llvm::Twine &What, int Errno) {
  return llvm::createStringError(std::error_code(Errno, std::generic_category()),
                                 What + ": " + std::strerror(Errno));
}

} // namespace catalyst::remote::wire

#endif
