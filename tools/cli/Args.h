//===- Args.h - A subcommand's command line ---------------------*- C++ -*-===//
//
// Each subcommand describes its operands and options in a table; parsing,
// --help and usage errors come from the table. Options take '--flag VALUE'
// or '--flag=VALUE', may come before, between or after the operands, and
// '--' ends them.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CLI_ARGS_H
#define CATALYST_REMOTE_CLI_ARGS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace catalyst::remote::cli {

struct Option {
  const char *Flag;  // "--count"
  const char *Value; // what it takes ("N"); null for a switch
  const char *Help;
  // Takes the value ("" for a switch); an error says why it does not fit.
  std::function<llvm::Error(llvm::StringRef)> Set;
};

struct Command {
  const char *Name;     // "ping"
  const char *Synopsis; // "ADDR [--count N]"
  const char *Summary;  // what it does, for --help
  std::vector<const char *> Operands;
  std::vector<Option> Options;
};

// A command line that cannot be used: the tool says so and exits with 2.
class UsageError : public llvm::ErrorInfo<UsageError> {
public:
  static char ID;
  explicit UsageError(std::string Message) : Message(std::move(Message)) {}
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::string Message;
};

llvm::Error usageError(const llvm::Twine &Message);

bool wantsHelp(llvm::ArrayRef<llvm::StringRef> Args);
std::string helpText(const Command &C);

// Runs each option's setter and returns the operands, exactly as many as
// C names.
llvm::Expected<std::vector<std::string>> parseArgs(const Command &C,
                                                   llvm::ArrayRef<llvm::StringRef> Args);

// Setters for the usual kinds of value.
std::function<llvm::Error(llvm::StringRef)> setCount(unsigned &Out, unsigned Max);
std::function<llvm::Error(llvm::StringRef)> setFlag(bool &Out);
std::function<llvm::Error(llvm::StringRef)> setText(std::string &Out);
std::function<llvm::Error(llvm::StringRef)> addText(std::vector<std::string> &Out);

} // namespace catalyst::remote::cli

#endif
