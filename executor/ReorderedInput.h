//===- ReorderedInput.h - An input arriving in source order -----*- C++ -*-===//
//
// The executor's end of wire/SourceOrder.h: the chunks of an input sent in
// source order land in a buffer the connection keeps, and each is
// transposed into the input's destination in the slab as soon as it lands,
// while the next one travels.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_REORDEREDINPUT_H
#define CATALYST_REMOTE_EXECUTOR_REORDEREDINPUT_H

#include "wire/SocketTransport.h"
#include "wire/SourceOrder.h"

#include <cstdlib>
#include <memory>

namespace catalyst::remote::executor {

// Used by the connection's reader thread alone.
class ReorderedInput final : public wire::PayloadSink {
public:
  // The next input: Order's array, bound for Dest, a destination the plan
  // checked inside the session's slabs for Order.bytes().
  void start(const wire::SourceOrder &Order, char *Dest);

  llvm::MutableArrayRef<char> buffer() override;
  llvm::Error take(size_t Bytes) override;

private:
  struct Free {
    void operator()(char *P) const { std::free(P); }
  };

  const wire::SourceOrder *Order = nullptr;
  char *Dest = nullptr;
  int64_t Next = 0;                  // the first row not yet taken
  std::unique_ptr<char, Free> Chunk; // kept from input to input
  size_t ChunkBytes = 0;
};

} // namespace catalyst::remote::executor

#endif
