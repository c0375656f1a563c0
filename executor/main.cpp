//===- main.cpp - catalyst-remote-executor --------------------------------===//
//
// catalyst-remote-executor --bind HOST:PORT [--bind ...] [--plugin PATH ...]
//
//===----------------------------------------------------------------------===//

#include "Listener.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <cstdio>
#include <dlfcn.h>
#include <mimalloc.h>
#include <string>
#include <vector>

using namespace llvm;
using namespace catalyst::remote::executor;

namespace {

const char *Usage =
    "usage: catalyst-remote-executor --bind HOST:PORT [--bind ...] [--plugin PATH ...]\n"
    "\n"
    "Serves catalyst-remote hosts over ORC EPC, one process per connection.\n"
    "  --bind HOST:PORT      listen here; a bare PORT binds 127.0.0.1; port 0 lets the\n"
    "                        kernel choose (the bound address is printed on stdout)\n"
    "  --plugin PATH         dlopen a shared library (RTLD_GLOBAL) before serving\n"
    "  --max-message MIB     largest message accepted from a host (default 8192)\n"
    "  --workers N           threads serving each connection (default 4)\n"
    "  --upstream-only       offer only Catalyst's upstream services\n";

struct Args {
  std::vector<std::string> Binds, Plugins;
  ConnectionOptions Connection;
};

bool parseCount(StringRef Text, uint64_t &Out) {
  return !Text.getAsInteger(10, Out) && Out > 0;
}

// Returns false (after saying why) when the command line is unusable.
bool parse(int Argc, char **Argv, Args &A) {
  for (int I = 1; I < Argc; ++I) {
    StringRef Flag = Argv[I];
    bool HasValue = I + 1 < Argc;
    uint64_t N = 0;
    if (Flag == "--upstream-only") {
      A.Connection.Services.UpstreamOnly = true;
    } else if (Flag == "--help" || Flag == "-h") {
      std::fputs(Usage, stdout);
      std::exit(0);
    } else if (Flag == "--bind" && HasValue) {
      A.Binds.push_back(Argv[++I]);
    } else if (Flag == "--plugin" && HasValue) {
      A.Plugins.push_back(Argv[++I]);
    } else if (Flag == "--max-message" && HasValue && parseCount(Argv[++I], N)) {
      A.Connection.MaxMessageSize = N << 20;
    } else if (Flag == "--workers" && HasValue && parseCount(Argv[++I], N)) {
      A.Connection.Workers = unsigned(N);
    } else {
      errs() << "catalyst-remote-executor: bad argument '" << Flag << "'\n" << Usage;
      return false;
    }
  }
  if (A.Binds.empty())
    errs() << "catalyst-remote-executor: at least one --bind is required\n" << Usage;
  return !A.Binds.empty();
}

bool loadPlugins(const std::vector<std::string> &Plugins) {
  for (const auto &P : Plugins) {
    if (!::dlopen(P.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      errs() << "catalyst-remote-executor: cannot load plugin " << P << ": " << ::dlerror() << "\n";
      return false;
    }
  }
  return true;
}

// Kernels' allocations should come from mimalloc, which replaces malloc
// when linked first; say so when something else (LD_PRELOAD) won.
void checkAllocator() {
  void *P = std::malloc(16);
  bool Ours = mi_is_in_heap_region(P);
  std::free(P);
  if (!Ours)
    errs() << "catalyst-remote-executor: warning: malloc is not mimalloc's\n";
}

} // namespace

int main(int Argc, char **Argv) {
  Args A;
  if (!parse(Argc, Argv, A) || !loadPlugins(A.Plugins))
    return 2;
  std::signal(SIGPIPE, SIG_IGN);
  checkAllocator();
  std::vector<Listener> Listeners;
  for (const auto &B : A.Binds) {
    auto L = listenOn(B);
    if (!L) {
      errs() << "catalyst-remote-executor: " << toString(L.takeError()) << "\n";
      return 1;
    }
    std::printf("catalyst-remote-executor: listening on %s\n", L->Address.c_str());
    Listeners.push_back(*L);
  }
  std::fflush(stdout);
  return serve(std::move(Listeners), A.Connection);
}
