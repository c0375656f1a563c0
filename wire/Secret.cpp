//===- Secret.cpp - The shared secret both ends prove they know -----------===//

#include "Secret.h"

#include "SysError.h"
#include "WriteAll.h"
#include "catalyst/remote/Failure.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

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

// A token file refused, or one that cannot be read, leaves the session
// without its secret: an authentication failure.
Error fileError(StringRef Path, const Twine &What, int Errno = 0) {
  std::string Msg = ("token file " + Path + ": " + What).str();
  if (Errno)
    Msg += std::string(": ") + std::strerror(Errno);
  return makeFailure(FailureKind::Authentication, Msg);
}

// Closes Fd when it goes out of scope.
struct FdCloser {
  int Fd;
  ~FdCloser() {
    if (Fd >= 0)
      ::close(Fd);
  }
};

// Bytes of a secret on the stack, wiped however the function using them
// ends.
template <size_t N> struct Wiped {
  char Data[N];
  ~Wiped() { ::OPENSSL_cleanse(Data, N); }
};

// The file, opened without following a symlink: a regular file of this
// process's user that no one else may access.
Error checkPrivate(int Fd, StringRef Path) {
  struct stat St;
  if (::fstat(Fd, &St) != 0)
    return fileError(Path, "cannot stat", errno);
  if (!S_ISREG(St.st_mode))
    return fileError(Path, "not a regular file");
  if (St.st_uid != ::geteuid())
    return fileError(Path, formatv("owned by uid {0}, not by this process's user (uid {1})",
                                   St.st_uid, ::geteuid()));
  if (St.st_mode & (S_IRWXG | S_IRWXO))
    return fileError(Path, "group or others may access it (mode " + fileMode(St.st_mode) +
                               "); run chmod 600 " + Path);
  if (St.st_size > off_t(MaxTokenFileSize))
    return fileError(Path, "larger than " + Twine(MaxTokenFileSize) + " bytes, not a token");
  return Error::success();
}

// Whoever may write to the file's directory may put another file in its
// place between two reads.
Error checkDirectory(StringRef Path) {
  StringRef Parent = sys::path::parent_path(Path);
  std::string Dir = Parent.empty() ? "." : Parent.str();
  struct stat St;
  if (::stat(Dir.c_str(), &St) != 0)
    return fileError(Path, "cannot stat its directory " + Dir, errno);
  if (St.st_mode & (S_IWGRP | S_IWOTH))
    return fileError(Path, "its directory " + Dir + " is writable by group or others (mode " +
                               fileMode(St.st_mode) +
                               "): keep token files in a directory only you can write to");
  return Error::success();
}

// Opens Path for reading, refusing a symlink, so that what is checked is
// the file itself.
Expected<int> openToken(StringRef Path) {
  int Fd = ::open(Path.str().c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
  if (Fd >= 0)
    return Fd;
  if (errno == ELOOP)
    return fileError(Path, "a symbolic link; name the file itself");
  return fileError(Path, "cannot open", errno);
}

} // namespace

Error checkSecret(StringRef Secret, StringRef Origin) {
  if (Secret.size() < MinSecretSize)
    return makeFailure(FailureKind::Authentication,
                       "the secret in " + Origin + " has " + Twine(Secret.size()) +
                           " bytes; at least " + Twine(MinSecretSize) +
                           " are needed (catalyst-remote-executor --new-token PATH writes one)");
  return Error::success();
}

unsigned secretBitsAtMost(StringRef Secret) {
  bool Hex = all_of(Secret, [](char C) { return isHexDigit(C); });
  return unsigned(Secret.size()) * (Hex ? 4 : 6);
}

Expected<SecretBytes> readTokenFile(StringRef Path) {
  if (auto Err = checkDirectory(Path))
    return Err;
  auto Opened = openToken(Path);
  if (!Opened)
    return Opened.takeError();
  FdCloser F{*Opened};
  if (auto Err = checkPrivate(F.Fd, Path))
    return Err;
  Wiped<MaxTokenFileSize> B;
  size_t Size = 0;
  for (;;) {
    ssize_t N = ::read(F.Fd, B.Data + Size, sizeof(B.Data) - Size);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return fileError(Path, "cannot read", errno);
    if (N == 0 || (Size += N) == sizeof(B.Data))
      break;
  }
  size_t Kept = StringRef(B.Data, Size).rtrim().size();
  SecretBytes Secret = SecretBytes::takeFrom(MutableArrayRef<char>(B.Data, Kept));
  if (auto Err = checkSecret(Secret.reveal(), ("token file " + Path).str()))
    return Err;
  return Secret;
}

Error writeNewTokenFile(StringRef Path) {
  constexpr size_t RawSize = 32;
  Wiped<RawSize> Raw;
  if (::RAND_bytes(reinterpret_cast<uint8_t *>(Raw.Data), RawSize) != 1)
    return fileError(Path, "OpenSSL could not draw random bytes");
  // Hex digits, then a newline: written out here, where they are wiped.
  Wiped<2 * RawSize + 1> Text;
  for (size_t I = 0; I < RawSize; ++I) {
    Text.Data[2 * I] = hexdigit(uint8_t(Raw.Data[I]) >> 4, /*LowerCase=*/true);
    Text.Data[2 * I + 1] = hexdigit(uint8_t(Raw.Data[I]) & 15, /*LowerCase=*/true);
  }
  Text.Data[2 * RawSize] = '\n';
  FdCloser F{
      ::open(Path.str().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
  if (F.Fd < 0)
    return fileError(Path, "cannot create", errno);
  // The umask may have taken bits away; none may be added.
  if (::fchmod(F.Fd, 0600) != 0)
    return fileError(Path, "cannot set mode 0600", errno);
  if (std::error_code EC = writeAll(F.Fd, ArrayRef<char>(Text.Data, sizeof(Text.Data))))
    return fileError(Path, "cannot write", EC.value());
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

Expected<Mac> prove(StringRef Secret, Prover Who, WireClaims Wire, const Nonce &FromExecutor,
                    const Nonce &FromHost) {
  static constexpr char HostLabel[] = "catalyst-remote host proof v2";
  static constexpr char ExecutorLabel[] = "catalyst-remote executor proof v2";
  StringRef Label = Who == Prover::Host ? HostLabel : ExecutorLabel;
  uint8_t Msg[sizeof(ExecutorLabel) + 16 + 2 * NonceSize];
  size_t Len = Label.size() + 1; // the NUL ends the label unambiguously
  std::memcpy(Msg, Label.data(), Label.size());
  Msg[Label.size()] = 0;
  llvm::support::endian::write64le(Msg + Len, Wire.Executor);
  llvm::support::endian::write64le(Msg + Len + 8, Wire.Host);
  Len += 16;
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

Error prepareCrypto() {
  Nonce N;
  if (auto Err = drawNonce(N))
    return Err;
  std::string Key(MinSecretSize, 'k');
  return prove(Key, Prover::Host, WireClaims(), N, N).takeError();
}

bool sameMac(const Mac &A, ArrayRef<uint8_t> B) {
  return B.size() == A.size() && ::CRYPTO_memcmp(A.data(), B.data(), A.size()) == 0;
}

} // namespace catalyst::remote::wire
