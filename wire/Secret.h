//===- Secret.h - The shared secret both ends prove they know ---*- C++ -*-===//
//
// A session's host and executor share a secret (a token file on each side)
// and prove to each other that they know it without sending it: each side
// returns an HMAC-SHA-256, keyed by the secret, over nonces both sides drew.
// The cryptography is OpenSSL's.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_SECRET_H
#define CATALYST_REMOTE_WIRE_SECRET_H

#include "catalyst/remote/SecretBytes.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>

namespace catalyst::remote::wire {

inline constexpr size_t NonceSize = 32;
inline constexpr size_t MacSize = 32;
using Nonce = std::array<uint8_t, NonceSize>;
using Mac = std::array<uint8_t, MacSize>;

// A secret shorter than this is refused: it could be guessed.
inline constexpr size_t MinSecretSize = 16;

// Checks that Secret is long enough; Origin names where it came from.
llvm::Error checkSecret(llvm::StringRef Secret, llvm::StringRef Origin);

// The strength the text of Secret can have at most, in bits: 4 a character
// when it is all hex digits, else 6 (the base64 alphabet; a word is far
// weaker, which no count can see). Below 128 deserves a warning.
inline constexpr unsigned StrongSecretBits = 128;
unsigned secretBitsAtMost(llvm::StringRef Secret);

// Reads a token file: its bytes, without trailing white space, are the
// secret. As ssh does with private keys, refuses a symlink, a file that is
// not regular, that another user owns, or that its group or others may
// access, and a file in a directory its group or others may write to. The
// buffer the file is read into is wiped.
llvm::Expected<SecretBytes> readTokenFile(llvm::StringRef Path);

// Writes a fresh 256-bit secret (64 hex digits) to Path, created with mode
// 0600; refuses to replace an existing file.
llvm::Error writeNewTokenFile(llvm::StringRef Path);

// Fills N with cryptographically strong random bytes.
llvm::Error drawNonce(Nonce &N);

// Which side a proof speaks for: the two proofs of one handshake differ, so
// neither can be reflected back as the other.
enum class Prover { Host, Executor };

// What the two ends say they will do with the session's bytes (each end's
// WireMode, Handshake.h): bound into both proofs, so that a relay cannot
// change either without the proofs failing.
struct WireClaims {
  uint64_t Executor = 0, Host = 0;
};

// HMAC-SHA-256, keyed by Secret, over the prover's label, both ends' wire
// modes and both nonces.
llvm::Expected<Mac> prove(llvm::StringRef Secret, Prover Who, WireClaims Wire,
                          const Nonce &FromExecutor, const Nonce &FromHost);

// Loads OpenSSL's HMAC and seeds its random generator now: processes
// forked afterwards (an executor's connections) then do not each pay for
// it during their handshake.
llvm::Error prepareCrypto();

// Compares in time independent of where the proofs differ.
bool sameMac(const Mac &A, llvm::ArrayRef<uint8_t> B);

} // namespace catalyst::remote::wire

#endif
