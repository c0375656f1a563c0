//===- TokenSource.cpp - Where the executor's secret comes from -----------===//

#include "TokenSource.h"

#include "wire/Secret.h"

#include <cstdlib>
#include <cstring>
#include <openssl/crypto.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::executor {

namespace {

constexpr char TokenVariable[] = "CATALYST_REMOTE_TOKEN";
constexpr char TokenFileVariable[] = "CATALYST_REMOTE_TOKEN_FILE";

// The entry NAME=VALUE of environ for Name, or null.
char *environmentEntry(const char *Name) {
  size_t Len = std::strlen(Name);
  for (char **E = environ; *E; ++E)
    if (std::strncmp(*E, Name, Len) == 0 && (*E)[Len] == '=')
      return *E;
  return nullptr;
}

// A variable set but empty (as `$(cat missing-file)` leaves it) is a
// mistake, not a wish to go without a secret: an executor beyond loopback
// would then refuse to start for want of one, or serve anyone on
// loopback, with nothing saying why.
Error setButEmpty(const char *Name) {
  return createStringError(inconvertibleErrorCode(),
                           "%s is set but empty; unset it to start without a secret from it", Name);
}

} // namespace

EnvironmentSecret takeSecretFromEnvironment() {
  EnvironmentSecret Out;
  // Every entry is wiped, should the environment hold the name twice.
  while (char *Entry = environmentEntry(TokenVariable)) {
    char *Value = Entry + sizeof(TokenVariable);
    MutableArrayRef<char> Bytes(Value, std::strlen(Value));
    if (!Out.Set)
      Out.Secret = SecretBytes::takeFrom(Bytes); // wipes Bytes
    else
      ::OPENSSL_cleanse(Bytes.data(), Bytes.size());
    Out.Set = true;
    // unsetenv removes every entry of the name: the loop then ends.
    ::unsetenv(TokenVariable);
  }
  return Out;
}

Expected<Token> chooseToken(StringRef TokenFileOption, EnvironmentSecret FromEnv) {
  Token T;
  std::string Path = TokenFileOption.str();
  if (!Path.empty()) {
    T.Origin = "--token-file " + Path;
  } else if (const char *Named = std::getenv(TokenFileVariable)) {
    if (!*Named)
      return setButEmpty(TokenFileVariable);
    Path = Named;
    T.Origin = std::string(TokenFileVariable) + " (" + Path + ")";
  }
  if (!Path.empty()) {
    auto Secret = wire::readTokenFile(Path);
    if (!Secret)
      return createStringError(inconvertibleErrorCode(), "%s: %s", T.Origin.c_str(),
                               toString(Secret.takeError()).c_str());
    T.Secret = std::move(*Secret);
    T.Where = Path;
    return T;
  }
  if (!FromEnv.Set)
    return T;
  if (FromEnv.Secret.empty())
    return setButEmpty(TokenVariable);
  if (auto Err = wire::checkSecret(FromEnv.Secret.reveal(), TokenVariable))
    return Err;
  T.Secret = std::move(FromEnv.Secret);
  T.Origin = std::string(TokenVariable) + " (taken out of the environment)";
  T.Where = TokenVariable;
  return T;
}

} // namespace catalyst::remote::executor
