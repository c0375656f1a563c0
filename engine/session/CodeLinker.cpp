//===- CodeLinker.cpp - Kernel objects linked into the executor -----------===//

#include "CodeLinker.h"

#include "catalyst/remote/Failure.h"

#include "llvm/ExecutionEngine/Orc/EPCDynamicLibrarySearchGenerator.h"
#include "llvm/ExecutionEngine/Orc/ObjectFileInterface.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

Expected<std::unique_ptr<CodeLinker>> CodeLinker::Create(ExecutionSession &ES) {
  auto &Main = ES.createBareJITDylib("main");
  auto Process = EPCDynamicLibrarySearchGenerator::GetForTargetProcess(ES);
  if (!Process)
    return Process.takeError();
  Main.addGenerator(std::move(*Process));
  return std::unique_ptr<CodeLinker>(new CodeLinker(ES, Main));
}

void CodeLinker::noteReportedError(Error Err) {
  std::string Text = toString(std::move(Err));
  sync::MutexLock Lock(M);
  // Only while linking: a failure reported at another time (a launch's
  // message refused, say) was returned to its caller and is no link cause.
  if (Linking > 0)
    Reported = std::move(Text);
}

Error CodeLinker::withReportedCause(Error Err) {
  std::string Cause;
  {
    sync::MutexLock Lock(M);
    Cause = std::exchange(Reported, std::string());
  }
  if (Cause.empty())
    return Err;
  return createStringError(inconvertibleErrorCode(), toString(std::move(Err)) + ": " + Cause);
}

Error CodeLinker::linkAll(JITDylib &JD, SymbolLookupSet Syms) {
  LinkingScope Scope(*this);
  auto Linked = ES.lookup(makeJITDylibSearchOrder(&JD, JITDylibLookupFlags::MatchAllSymbols),
                          std::move(Syms), LookupKind::Static, SymbolState::Ready);
  return Linked ? Error::success() : withReportedCause(Linked.takeError());
}

Error CodeLinker::addObject(StringRef Path) {
  {
    sync::MutexLock Lock(M);
    if (Objects.count(Path))
      return Error::success();
  }
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return makeFailure(FailureKind::BadArgument,
                       "cannot read object '" + Path + "': " + Buf.getError().message());
  auto Iface = getObjectFileInterface(ES, (*Buf)->getMemBufferRef());
  if (!Iface)
    return makeFailure(FailureKind::BadArgument,
                       "'" + Path + "' is not a valid object file: " + toString(Iface.takeError()));
  SymbolLookupSet Syms;
  for (auto &KV : Iface->SymbolFlags)
    Syms.add(KV.first, SymbolLookupFlags::WeaklyReferencedSymbol);
  auto JD = ES.createJITDylib(("object:" + Path).str());
  if (!JD)
    return JD.takeError();
  JD->addToLinkOrder(Main);
  Error Err = Layer.add(*JD, std::move(*Buf));
  if (!Err)
    Err = linkAll(*JD, std::move(Syms));
  if (Err) {
    // A removal that fails leaves the object's code in the executor and its
    // name taken, which a second link of the same path meets: said too.
    if (Error Left = ES.removeJITDylib(*JD))
      Err = joinErrors(std::move(Err),
                       withContext("removing what the failed link left", std::move(Left)));
    return withContext("cannot link '" + Path + "'", std::move(Err));
  }
  sync::MutexLock Lock(M);
  Objects[Path] = &*JD;
  auto Name = sys::path::filename(Path);
  auto [It, New] = Objects.try_emplace(Name, &*JD);
  if (!New && It->second != &*JD)
    It->second = nullptr; // two objects share this file name: only paths work
  return Error::success();
}

Expected<JITDylib *> CodeLinker::dylibFor(StringRef Object) {
  if (Object.empty())
    return &Main;
  sync::MutexLock Lock(M);
  auto It = Objects.find(Object);
  if (It == Objects.end())
    return makeFailure(FailureKind::BadArgument,
                       "object '" + Object + "' was not sent to this session");
  if (!It->second)
    return makeFailure(FailureKind::BadArgument,
                       "object name '" + Object +
                           "' is ambiguous: several sent objects have it; name the object by its "
                           "path");
  return It->second;
}

Expected<ExecutorAddr> CodeLinker::lookup(StringRef Object, StringRef Symbol) {
  {
    // Looked up on every launch: no string is built on this path, and a
    // program that launches one entry again and again matches the last one.
    sync::MutexLock Lock(M);
    if (Last.Addr && Last.Object == Object && Last.Symbol == Symbol)
      return Last.Addr;
    auto InObject = Symbols.find(Object);
    if (InObject != Symbols.end()) {
      auto It = InObject->second.find(Symbol);
      if (It != InObject->second.end()) {
        Last = {Object.str(), Symbol.str(), It->second};
        return It->second;
      }
    }
  }
  auto JD = dylibFor(Object);
  if (!JD)
    return JD.takeError();
  LinkingScope Scope(*this);
  auto Sym = ES.lookup(makeJITDylibSearchOrder(*JD), ES.intern(Symbol));
  if (!Sym)
    return createStringError(
        inconvertibleErrorCode(), "symbol '%s' not found in %s: %s", Symbol.str().c_str(),
        Object.empty() ? "the executor process" : ("object '" + Object + "'").str().c_str(),
        toString(withReportedCause(Sym.takeError())).c_str());
  sync::MutexLock Lock(M);
  Symbols[Object][Symbol] = Sym->getAddress();
  return Sym->getAddress();
}

} // namespace catalyst::remote
