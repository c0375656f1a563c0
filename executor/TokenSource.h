//===- TokenSource.h - Where the executor's secret comes from ---*- C++ -*-===//
//
// The secret hosts must prove they know comes, first found first, from
//   --token-file PATH              a file only this user may read;
//   CATALYST_REMOTE_TOKEN_FILE     the same, named in the environment;
//   CATALYST_REMOTE_TOKEN          the secret itself, in the environment,
// as a host takes it (SessionOptions.h), so that one exported variable
// serves both ends of a job (srun passes the environment on by default;
// Open MPI's mpirun needs -x NAME).
//
// CATALYST_REMOTE_TOKEN is taken out of the environment whichever source
// wins, before anything is forked: a kernel could otherwise read it through
// getenv, or through /proc/PID/environ of its own process or its
// listener's, which show the environment as the process started whatever
// unsetenv does. So the value is copied out, overwritten where it lies,
// and the variable removed.
//
//   auto Env = takeSecretFromEnvironment();   // first thing in main
//   auto Token = chooseToken(A.TokenFile, std::move(Env));
//   errs() << describe(*Token);               // names the source only
//
// Thread safety: takeSecretFromEnvironment() changes the environment, so
// it runs while the process has one thread.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_TOKENSOURCE_H
#define CATALYST_REMOTE_EXECUTOR_TOKENSOURCE_H

#include "catalyst/remote/SecretBytes.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace catalyst::remote::executor {

// CATALYST_REMOTE_TOKEN as the process started with it, now gone from its
// environment. Set says the variable was there (perhaps empty).
struct EnvironmentSecret {
  SecretBytes Secret;
  bool Set = false;
};

EnvironmentSecret takeSecretFromEnvironment();

// The secret chosen and where it came from: Origin for the log
// ("--token-file PATH", ...; empty: no secret), Where for messages about
// the secret itself (the file's path, or the variable's name).
struct Token {
  SecretBytes Secret;
  std::string Origin, Where;
};

// Reads the source that wins. Fails, naming the option or variable, when
// that source is unusable (a file readTokenFile refuses, a variable set
// but empty, a secret too short).
llvm::Expected<Token> chooseToken(llvm::StringRef TokenFileOption, EnvironmentSecret FromEnv);

} // namespace catalyst::remote::executor

#endif
