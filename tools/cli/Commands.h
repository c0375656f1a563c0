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

#include "catalyst/remote/SessionOptions.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace catalyst::remote::cli {

struct Command;

llvm::Error ping(llvm::ArrayRef<llvm::StringRef> Args);
llvm::Error run(llvm::ArrayRef<llvm::StringRef> Args);

// How each begins: with --help, prints C's help and returns no operands;
// else fills Session from the environment, then runs C's option setters on
// Args (which may override it) and returns the operands.
llvm::Expected<std::optional<std::vector<std::string>>>
beginCommand(const Command &C, llvm::ArrayRef<llvm::StringRef> Args, SessionOptions &Session);

} // namespace catalyst::remote::cli

#endif
