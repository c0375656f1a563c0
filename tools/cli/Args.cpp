//===- Args.cpp - A subcommand's command line -----------------------------===//

#include "Args.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace catalyst::remote::cli {

char UsageError::ID;

void UsageError::log(raw_ostream &OS) const {
  OS << Message;
}

std::error_code UsageError::convertToErrorCode() const {
  return std::make_error_code(std::errc::invalid_argument);
}

Error usageError(const Twine &Message) {
  return make_error<UsageError>(Message.str());
}

bool wantsHelp(ArrayRef<StringRef> Args) {
  for (StringRef A : Args) {
    if (A == "--")
      return false;
    if (A == "--help" || A == "-h")
      return true;
  }
  return false;
}

std::string helpText(const Command &C) {
  std::string Out;
  raw_string_ostream OS(Out);
  OS << "usage: catalyst-remote " << C.Name << " " << C.Synopsis << "\n\n" << C.Summary << "\n";
  if (!C.Options.empty())
    OS << "\noptions (--flag VALUE or --flag=VALUE):\n";
  for (const Option &O : C.Options) {
    std::string Left = std::string(O.Flag) + (O.Value ? std::string(" ") + O.Value : "");
    OS << formatv("  {0,-20} ", Left);
    if (Left.size() > 20)
      OS << "\n" << std::string(23, ' ');
    // Continuation lines of the help line up with its first.
    SmallVector<StringRef, 4> Lines;
    StringRef(O.Help).split(Lines, '\n');
    OS << join(Lines, "\n" + std::string(23, ' ')) << "\n";
  }
  OS << "  --help               this text\n";
  return Out;
}

namespace {

// Feeds one option (Arg is "--flag" or "--flag=value") its value, taken from
// the next argument when not inline.
Error takeOption(const Command &C, StringRef Arg, ArrayRef<StringRef> Args, size_t &I) {
  auto [Flag, Inline] = Arg.split('=');
  bool HasInline = Arg.contains('=');
  auto O = find_if(C.Options, [&](const Option &O) { return Flag == O.Flag; });
  if (O == C.Options.end())
    return usageError(formatv("{0}: unknown option '{1}'", C.Name, Flag));
  if (!O->Value && HasInline)
    return usageError(formatv("{0}: {1} takes no value", C.Name, Flag));
  if (O->Value && !HasInline && I + 1 >= Args.size())
    return usageError(formatv("{0}: {1} needs a value ({2})", C.Name, Flag, O->Value));
  StringRef Value = !O->Value ? StringRef() : HasInline ? Inline : Args[++I];
  if (auto Err = O->Set(Value))
    return usageError(formatv("{0}: {1} {2}: {3}", C.Name, Flag, Value, toString(std::move(Err))));
  return Error::success();
}

} // namespace

Expected<std::vector<std::string>> parseArgs(const Command &C, ArrayRef<StringRef> Args) {
  std::vector<std::string> Operands;
  bool OptionsEnded = false;
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (!OptionsEnded && A == "--") {
      OptionsEnded = true;
      continue;
    }
    if (OptionsEnded || !A.starts_with("-") || A == "-") {
      Operands.push_back(A.str());
      continue;
    }
    if (auto Err = takeOption(C, A, Args, I))
      return Err;
  }
  if (Operands.size() != C.Operands.size())
    return usageError(
        formatv("{0}: expected {1} ({2} given)", C.Name, join(C.Operands, " "), Operands.size()));
  return Operands;
}

std::function<Error(StringRef)> setCount(unsigned &Out, unsigned Max) {
  return [&Out, Max](StringRef V) -> Error {
    if (V.getAsInteger(10, Out) || Out == 0 || Out > Max)
      return createStringError(inconvertibleErrorCode(), "expected a whole number from 1 to %u",
                               Max);
    return Error::success();
  };
}

std::function<Error(StringRef)> setFlag(bool &Out) {
  return [&Out](StringRef) -> Error {
    Out = true;
    return Error::success();
  };
}

std::function<Error(StringRef)> setText(std::string &Out) {
  return [&Out](StringRef V) -> Error {
    if (V.empty())
      return createStringError(inconvertibleErrorCode(), "expected a value, not nothing");
    Out = V.str();
    return Error::success();
  };
}

std::function<Error(StringRef)> addText(std::vector<std::string> &Out) {
  return [&Out](StringRef V) -> Error {
    if (V.empty())
      return createStringError(inconvertibleErrorCode(), "expected a value, not nothing");
    Out.push_back(V.str());
    return Error::success();
  };
}

} // namespace catalyst::remote::cli
