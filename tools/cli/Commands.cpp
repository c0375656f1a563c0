//===- Commands.cpp - How every subcommand begins -------------------------===//

#include "Commands.h"

#include "Args.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace catalyst::remote::cli {

Expected<std::optional<std::vector<std::string>>>
beginCommand(const Command &C, ArrayRef<StringRef> Args, SessionOptions &Session) {
  if (wantsHelp(Args)) {
    outs() << helpText(C);
    return std::nullopt;
  }
  auto Env = optionsFromEnvironment();
  if (!Env)
    return Env.takeError();
  Session = std::move(*Env);
  auto Operands = parseArgs(C, Args);
  if (!Operands)
    return Operands.takeError();
  return std::move(*Operands);
}

} // namespace catalyst::remote::cli
