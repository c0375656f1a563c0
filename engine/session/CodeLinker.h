//===- CodeLinker.h - Kernel objects linked into the executor ---*- C++ -*-===//
//
// Each shipped object gets its own JITDylib that links against one shared
// main JITDylib, which resolves against the executor process (its plugins,
// libc). Two objects may therefore export the same entry name.
//
// Threads: addObject() on a caller sending a binary, lookup() on the
// launching thread and on callers of callWrapper(), all under the
// session's Life (shared), so several at once; noteReportedError() on whatever thread ORC reports
// from (an ORC task, TaskPool). Every member below M is GUARDED_BY it; ES, Layer and Main are set
// at creation and lock their own.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_CODELINKER_H
#define CATALYST_REMOTE_SESSION_CODELINKER_H

#include "sync/Mutex.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"

#include <string>

namespace catalyst::remote {

class CodeLinker {
public:
  static llvm::Expected<std::unique_ptr<CodeLinker>> Create(llvm::orc::ExecutionSession &ES);

  // Links the object at Path now, so that bad files and unresolved symbols
  // are reported here. A path already linked is a no-op.
  llvm::Error addObject(llvm::StringRef Path);

  // Finds Symbol in the object named Object (its path or file name), or in
  // the executor process when Object is empty. Results are cached.
  llvm::Expected<llvm::orc::ExecutorAddr> lookup(llvm::StringRef Object, llvm::StringRef Symbol);

  // ORC reports link failures out of band; the session forwards them here so
  // the error returned to the caller can say what actually went wrong.
  void noteReportedError(llvm::Error Err);

private:
  CodeLinker(llvm::orc::ExecutionSession &ES, llvm::orc::JITDylib &Main)
      : ES(ES), Layer(ES), Main(Main) {}

  llvm::Error linkAll(llvm::orc::JITDylib &JD, llvm::orc::SymbolLookupSet Symbols);
  llvm::Expected<llvm::orc::JITDylib *> dylibFor(llvm::StringRef Object);
  llvm::Error withReportedCause(llvm::Error Err);

  llvm::orc::ExecutionSession &ES;
  llvm::orc::ObjectLinkingLayer Layer;
  llvm::orc::JITDylib &Main;
  sync::Mutex M;
  // By path and by file name.
  llvm::StringMap<llvm::orc::JITDylib *> Objects GUARDED_BY(M);
  // Object -> symbol.
  llvm::StringMap<llvm::StringMap<llvm::orc::ExecutorAddr>> Symbols GUARDED_BY(M);
  struct {
    std::string Object, Symbol;
    llvm::orc::ExecutorAddr Addr;
  } Last GUARDED_BY(M);
  std::string Reported GUARDED_BY(M);
  unsigned Linking GUARDED_BY(M) = 0; // lookups in progress that may link
  struct LinkingScope {
    CodeLinker &L;
    explicit LinkingScope(CodeLinker &L) : L(L) {
      sync::MutexLock Lock(L.M);
      ++L.Linking;
    }
    ~LinkingScope() {
      sync::MutexLock Lock(L.M);
      --L.Linking;
    }
  };
};

} // namespace catalyst::remote

#endif
