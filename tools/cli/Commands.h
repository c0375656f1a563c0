//===- Commands.h - The subcommands of catalyst-remote ----------*- C++ -*-===//
//
// Each takes its arguments (after its name), prints its result on stdout
// (or its help, when asked) and returns what went wrong. Session options
// start from the environment, as the library reads it for any embedder
// (CATALYST_REMOTE_TOKEN_FILE and friends); the command line overrides them.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CLI_COMMANDS_H
#define CATALYST_REMOTE_CLI_COMMANDS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace catalyst::remote::cli {

llvm::Error ping(llvm::ArrayRef<llvm::StringRef> Args);
llvm::Error run(llvm::ArrayRef<llvm::StringRef> Args);

} // namespace catalyst::remote::cli

#endif
