//===- SecretBytes.h - A secret kept in one place, wiped after --*- C++ -*-===//
//
// The secret a host and its executor share (SessionOptions::Secret, the
// executor's --token-file). Its bytes live in one buffer, which is wiped
// (OPENSSL_cleanse) before it is freed, when the last holder lets go.
//
// Copying a SecretBytes shares that buffer instead of duplicating the bytes,
// so that options structs holding one stay copyable and the secret still
// exists once; copyOf() and takeFrom() are the only ways bytes get in.
//
//   SessionOptions O;
//   O.Secret = SecretBytes::copyOf(Text); // Text stays the caller's to wipe
//   checkSomething(O.Secret.reveal());    // a view, valid while O holds it
//
// Thread-safety: as a std::shared_ptr to immutable bytes. Copies may be
// read and destroyed on any thread; one object is not assigned while
// another thread uses it. wipeNow() is the exception, see there.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SECRETBYTES_H
#define CATALYST_REMOTE_SECRETBYTES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <memory>

namespace catalyst::remote {

class SecretBytes {
public:
  // No secret.
  SecretBytes() = default;

  // A new buffer holding a copy of Text.
  static SecretBytes copyOf(llvm::StringRef Text);
  // A new buffer holding a copy of Bytes, which are then wiped.
  static SecretBytes takeFrom(llvm::MutableArrayRef<char> Bytes);

  bool empty() const { return size() == 0; }
  size_t size() const;
  // The bytes, for as long as this object holds them. Keep no copy.
  llvm::StringRef reveal() const;

  // Wipes the bytes now, for every holder in this process, which all hold
  // an empty secret from then on. For a process forked from one that keeps
  // the secret, once it needs it no more (an executor's connection
  // process after authenticating): no other thread may be using a copy.
  void wipeNow();

private:
  struct Buffer;
  std::shared_ptr<Buffer> Bytes;
};

} // namespace catalyst::remote

#endif
