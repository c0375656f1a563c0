//===- LaunchArguments.h - A launch's arguments, checked --------*- C++ -*-===//
//
// What a session checks of the caller's memrefs before any strategy copies
// or sends a byte: each input described, laid out without overflow and
// readable page by page; each output a memref; buffers lent to receive
// outputs one per output, none overlapping another; handles to keep
// outputs in one per output, none twice. Every failure is the
// caller's (FailureKind::BadArgument) and names the argument.
//
//   if (auto Err = checkOutputs(Call)) return Err;
//   auto Inputs = checkInputs(Call.Inputs, &Table); // CheckedInputs for a Transfer
//
// Thread safety: pure functions of their arguments, but for the session's
// resident table, used in its launch turn.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_LAUNCHARGUMENTS_H
#define CATALYST_REMOTE_SESSION_LAUNCHARGUMENTS_H

#include "../transfer/Transfer.h"
#include "ResidentTable.h"
#include "catalyst/remote/Session.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace catalyst::remote {

// The inputs' layouts, once every input is a readable memref or one of
// Residents' (which must be given when an input is a resident). Errors
// name an input as Role and its index ("input 2").
llvm::Expected<std::vector<CheckedInput>>
checkInputs(llvm::ArrayRef<MemrefArg> Inputs, ResidentTable *Residents, const char *Role = "input");

// Every output a memref (a descriptor, an element size, a rank the wire
// carries), the buffers lent for them (Call.Into) usable, and the handles
// to keep them in (Call.Keep) one per output, none twice.
llvm::Error checkOutputs(const LaunchCall &Call);

// Which of Count outputs the caller lends a buffer for (Into): those need
// no fresh buffer.
llvm::SmallVector<bool, 8> lentOutputs(llvm::ArrayRef<llvm::MutableArrayRef<char>> Into,
                                       size_t Count);

} // namespace catalyst::remote

#endif
