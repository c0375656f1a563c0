//===- main.cpp - catalyst-remote -----------------------------------------===//
//
// catalyst-remote COMMAND [ARGS]: runs a subcommand and turns its error
// into one line on stderr and an exit status (1; 2 for a command line that
// cannot be used).
//
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "Commands.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using namespace llvm;
using namespace catalyst::remote::cli;

namespace {

const char *Usage =
    "usage: catalyst-remote COMMAND [ARGS]\n"
    "\n"
    "Talks to a catalyst-remote executor from the shell.\n"
    "\n"
    "commands:\n"
    "  ping ADDR                  what the executor offers, and its round-trip time\n"
    "  run ADDR OBJECT ENTRY ...  a kernel's entry on .npy files, outputs to .npy files\n"
    "\n"
    "'catalyst-remote COMMAND --help' says more; --version prints the version.\n"
    "Exit status: 0 on success, 1 when something failed, 2 for a command line that\n"
    "cannot be used; what failed is one line on stderr.\n";

struct Subcommand {
  StringRef Name;
  Error (*Run)(ArrayRef<StringRef> Args);
};

const Subcommand Subcommands[] = {{"ping", ping}, {"run", run}};

// Errors (joined ones too) may span lines; a failure is reported in one.
std::string oneLine(std::string Text) {
  for (char &C : Text)
    if (C == '\n')
      C = ' ';
  return StringRef(Text).trim().str();
}

// Command is the subcommand whose help explains a usage error, if any.
int fail(Error Err, StringRef Command = "") {
  bool Usage = Err.isA<UsageError>();
  errs() << "catalyst-remote: " << oneLine(toString(std::move(Err)));
  if (Usage)
    errs() << " (see catalyst-remote " << (Command.empty() ? "" : Command + " ") << "--help)";
  errs() << "\n";
  return Usage ? 2 : 1;
}

} // namespace

int main(int Argc, char **Argv) {
  std::vector<StringRef> Args(Argv + 1, Argv + Argc);
  if (Args.empty())
    return fail(usageError("no command given: ping or run"));
  StringRef Name = Args.front();
  if (Name == "--help" || Name == "-h" || Name == "help") {
    outs() << Usage;
    return 0;
  }
  if (Name == "--version") {
    outs() << "catalyst-remote " << CATALYST_REMOTE_VERSION << "\n";
    return 0;
  }
  const Subcommand *C = find_if(Subcommands, [&](const Subcommand &C) { return C.Name == Name; });
  if (C == std::end(Subcommands))
    return fail(usageError("unknown command '" + Name + "': ping or run"));
  if (Error Err = C->Run(ArrayRef<StringRef>(Args).drop_front()))
    return fail(std::move(Err), Name);
  outs().flush();
  if (outs().has_error()) {
    outs().clear_error();
    errs() << "catalyst-remote: cannot write the results to stdout\n";
    return 1;
  }
  return 0;
}
