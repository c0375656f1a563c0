//===- SecretBytes.cpp - A secret kept in one place, wiped after ----------===//

#include "catalyst/remote/SecretBytes.h"

#include <algorithm>
#include <openssl/crypto.h>

namespace catalyst::remote {

struct SecretBytes::Buffer {
  explicit Buffer(size_t Size) : Data(new char[Size]), Size(Size) {}
  ~Buffer() { wipe(); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  // OPENSSL_cleanse, not memset: a store to memory about to be freed is one
  // a compiler may drop.
  void wipe() {
    ::OPENSSL_cleanse(Data.get(), Size);
    Size = 0;
  }

  std::unique_ptr<char[]> Data;
  size_t Size;
};

SecretBytes SecretBytes::copyOf(llvm::StringRef Text) {
  SecretBytes S;
  if (Text.empty())
    return S;
  S.Bytes = std::make_shared<Buffer>(Text.size());
  std::copy(Text.begin(), Text.end(), S.Bytes->Data.get());
  return S;
}

SecretBytes SecretBytes::takeFrom(llvm::MutableArrayRef<char> Bytes) {
  SecretBytes S = copyOf(llvm::StringRef(Bytes.data(), Bytes.size()));
  ::OPENSSL_cleanse(Bytes.data(), Bytes.size());
  return S;
}

size_t SecretBytes::size() const {
  return Bytes ? Bytes->Size : 0;
}

llvm::StringRef SecretBytes::reveal() const {
  return Bytes ? llvm::StringRef(Bytes->Data.get(), Bytes->Size) : llvm::StringRef();
}

void SecretBytes::wipeNow() {
  if (Bytes)
    Bytes->wipe();
  Bytes.reset();
}

} // namespace catalyst::remote
