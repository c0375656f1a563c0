//===- Secret.cpp - The shared secret both ends prove they know -----------===//

#include "Secret.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

// A token file is a line of text; anything much larger is not one.
constexpr size_t MaxTokenFileSize = 4096;

Error fileError(StringRef Path, const Twine &What, int Errno = 0) {
  std::string Msg = ("token file " + Path + ": " + What).str();
  if (Errno)
    Msg += std::string(": ") + std::strerror(Errno);
  return createStringError(std::error_code(Errno ? Errno : EINVAL, std::generic_category()), Msg);
}

// Closes Fd when it goes out of scope.
struct FdCloser {
  int Fd;
  ~FdCloser() {
    if (Fd >= 0)
      ::close(Fd);
  }
};

Error checkPrivate(int Fd, StringRef Path) {
  struct stat St;
  if (::fstat(Fd, &St) != 0)
    return fileError(Path, "cannot stat", errno);
  if (!S_ISREG(St.st_mode))
    return fileError(Path, "not a regular file");
  if (St.st_mode & (S_IRWXG | S_IRWXO))
    return fileError(Path, formatv("group or others may access it (mode {0:o}); run chmod 600 {1}",
                                   St.st_mode & 07777, Path));
  if (St.st_size > off_t(MaxTokenFileSize))
    return fileError(Path, "larger than " + Twine(MaxTokenFileSize) + " bytes, not a token");
  return Error::success();
}

} // namespace

Error checkSecret(StringRef Secret, StringRef Origin) {
  if (Secret.size() < MinSecretSize)
    return createStringError(inconvertibleErrorCode(),
                             "the secret in %s has %zu bytes; at least %zu are needed "
                             "(catalyst-remote-executor --new-token PATH writes one)",
                             Origin.str().c_str(), Secret.size(), MinSecretSize);
  return Error::success();
}

Expected<std::string> readTokenFile(StringRef Path) {
  FdCloser F{::open(Path.str().c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY)};
  if (F.Fd < 0)
    return fileError(Path, "cannot open", errno);
  if (auto Err = checkPrivate(F.Fd, Path))
    return Err;
  char Buf[MaxTokenFileSize];
  size_t Size = 0;
  for (;;) {
    ssize_t N = ::read(F.Fd, Buf + Size, sizeof(Buf) - Size);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return fileError(Path, "cannot read", errno);
    if (N == 0 || (Size += N) == sizeof(Buf))
      break;
  }
  std::string Secret = StringRef(Buf, Size).rtrim().str();
  ::OPENSSL_cleanse(Buf, sizeof(Buf));
  if (auto Err = checkSecret(Secret, ("token file " + Path).str()))
    return Err;
  return Secret;
}

Error writeNewTokenFile(StringRef Path) {
  uint8_t Raw[32];
  if (::RAND_bytes(Raw, sizeof(Raw)) != 1)
    return fileError(Path, "OpenSSL could not draw random bytes");
  std::string Text = toHex(ArrayRef<uint8_t>(Raw), /*LowerCase=*/true) + "\n";
  ::OPENSSL_cleanse(Raw, sizeof(Raw));
  FdCloser F{
      ::open(Path.str().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
  if (F.Fd < 0)
    return fileError(Path, "cannot create", errno);
  // The umask may have taken bits away; none may be added.
  if (::fchmod(F.Fd, 0600) != 0)
    return fileError(Path, "cannot set mode 0600", errno);
  size_t Done = 0;
  while (Done < Text.size()) {
    ssize_t N = ::write(F.Fd, Text.data() + Done, Text.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return fileError(Path, "cannot write", errno);
    Done += N;
  }
  int Fd = std::exchange(F.Fd, -1);
  if (::close(Fd) != 0)
    return fileError(Path, "cannot write", errno);
  return Error::success();
}

Error drawNonce(Nonce &N) {
  if (::RAND_bytes(N.data(), int(N.size())) != 1)
    return createStringError(inconvertibleErrorCode(),
                             "OpenSSL could not draw random bytes for a nonce");
  return Error::success();
}

Expected<Mac> prove(StringRef Secret, Prover Who, const Nonce &FromExecutor,
                    const Nonce &FromHost) {
  static constexpr char HostLabel[] = "catalyst-remote host proof v1";
  static constexpr char ExecutorLabel[] = "catalyst-remote executor proof v1";
  StringRef Label = Who == Prover::Host ? HostLabel : ExecutorLabel;
  uint8_t Msg[sizeof(ExecutorLabel) + 2 * NonceSize];
  size_t Len = Label.size() + 1; // the NUL ends the label unambiguously
  std::memcpy(Msg, Label.data(), Label.size());
  Msg[Label.size()] = 0;
  std::memcpy(Msg + Len, FromExecutor.data(), NonceSize);
  std::memcpy(Msg + Len + NonceSize, FromHost.data(), NonceSize);
  Mac Out;
  unsigned OutLen = 0;
  if (!::HMAC(EVP_sha256(), Secret.data(), int(Secret.size()), Msg, Len + 2 * NonceSize, Out.data(),
              &OutLen) ||
      OutLen != Out.size())
    return createStringError(inconvertibleErrorCode(), "OpenSSL could not compute an HMAC");
  return Out;
}

bool sameMac(const Mac &A, ArrayRef<uint8_t> B) {
  return B.size() == A.size() && ::CRYPTO_memcmp(A.data(), B.data(), A.size()) == 0;
}

} // namespace catalyst::remote::wire
