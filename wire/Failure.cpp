//===- Failure.cpp - What kind of failure an Error is ---------------------===//

#include "catalyst/remote/Failure.h"

namespace catalyst::remote {

char Failure::ID = 0;

const char *failureKindName(FailureKind K) {
  switch (K) {
  case FailureKind::Other:
    return "other";
  case FailureKind::BadArgument:
    return "bad argument";
  case FailureKind::Authentication:
    return "authentication";
  case FailureKind::Unreachable:
    return "unreachable";
  case FailureKind::ExecutorLost:
    return "executor lost";
  case FailureKind::KernelCrashed:
    return "kernel crashed";
  case FailureKind::Timeout:
    return "timeout";
  case FailureKind::Closed:
    return "closed";
  case FailureKind::Busy:
    return "busy";
  }
  return "other";
}

void Failure::log(llvm::raw_ostream &OS) const {
  OS << Message;
}

std::error_code Failure::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

llvm::Error makeFailure(FailureKind Kind, const llvm::Twine &Message) {
  return llvm::make_error<Failure>(Kind, Message.str());
}

llvm::Error withContext(const llvm::Twine &Context, llvm::Error Err) {
  if (!Err)
    return Err;
  FailureReport R = reportFailure(std::move(Err));
  return makeFailure(R.Kind, Context + ": " + R.Message);
}

FailureReport reportFailure(llvm::Error Err) {
  FailureReport R;
  bool Found = false;
  std::string Message;
  llvm::raw_string_ostream OS(Message);
  // Every payload is logged in order, as toString does, joined by newlines.
  llvm::handleAllErrors(std::move(Err), [&](const llvm::ErrorInfoBase &E) {
    if (!Message.empty())
      OS << "\n";
    E.log(OS);
    if (!Found && E.isA<Failure>()) {
      R.Kind = static_cast<const Failure &>(E).kind();
      Found = true;
    }
  });
  R.Message = std::move(Message);
  return R;
}

} // namespace catalyst::remote
