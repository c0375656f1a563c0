//===- HostOutputs.h - Host buffers receiving one launch's outputs -*- C++ -*-===//
//
// Every strategy brings outputs back the same way: learn an output's shape,
// get a caller-owned buffer for it (fresh, or the one the caller lent to
// receive it into), fill it densely, and at the end point the caller's
// descriptor at it. Until commit() nothing the caller sees has changed for
// good: a launch that fails half-way releases the fresh buffers it got and
// leaves every output descriptor zeroed.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_HOSTOUTPUTS_H
#define CATALYST_REMOTE_TRANSFER_HOSTOUTPUTS_H

#include "catalyst/remote/Launch.h"
#include "catalyst/remote/OutputAllocator.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace catalyst::remote {

class HostOutputs {
public:
  // Into[I], where present and large enough, receives output I.
  HostOutputs(llvm::ArrayRef<MemrefArg> Outputs, OutputAllocator Alloc,
              llvm::ArrayRef<llvm::MutableArrayRef<char>> Into = {});
  ~HostOutputs();
  HostOutputs(const HostOutputs &) = delete;
  HostOutputs &operator=(const HostOutputs &) = delete;

  size_t size() const { return Outputs.size(); }
  llvm::ArrayRef<MemrefArg> specs() const { return Outputs; }
  const MemrefArg &operator[](size_t I) const { return Outputs[I]; }

  // The bytes of output I's dense values if it has shape Sizes, which must
  // be of its rank.
  llvm::Expected<uint64_t> bytesOf(size_t I, llvm::ArrayRef<int64_t> Sizes) const;

  // Records output I's shape and returns a buffer for its dense values.
  llvm::Expected<llvm::MutableArrayRef<char>> allocate(size_t I, llvm::ArrayRef<int64_t> Sizes);

  // Points every output descriptor at its buffer; the caller now owns them.
  void commit();

  // The dense bytes of the outputs given buffers so far.
  uint64_t bytes() const { return BytesGiven; }

private:
  char *freshBuffer(uint64_t Bytes);

  llvm::ArrayRef<MemrefArg> Outputs;
  OutputAllocator Alloc;
  llvm::ArrayRef<llvm::MutableArrayRef<char>> Into;
  std::vector<char *> Buffers;
  std::vector<bool> Lent; // Buffers[I] is Into[I]: never released here
  bool Committed = false;
  uint64_t BytesGiven = 0;
};

} // namespace catalyst::remote

#endif
