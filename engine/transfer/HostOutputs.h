//===- HostOutputs.h - Host buffers receiving one launch's outputs -*- C++ -*-===//
//
// Every strategy brings outputs back the same way: learn an output's shape,
// get a caller-owned buffer for it (fresh, or the one the caller lent to
// receive it into), fill it densely, and at the end point the caller's
// descriptor at it. Until commit() nothing the caller sees has changed for
// good: a launch that fails half-way releases the fresh buffers it got and
// leaves every output descriptor zeroed.
//
// An output the launch keeps in the executor as a resident (keep()) gets
// no buffer: the result gives its shape alone (keptShape()), and commit()
// writes that shape into its descriptor, with null pointers.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_HOSTOUTPUTS_H
#define CATALYST_REMOTE_TRANSFER_HOSTOUTPUTS_H

#include "catalyst/remote/Launch.h"
#include "catalyst/remote/OutputAllocator.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace catalyst::remote {

class OutputForecast;

// Asks for transparent huge pages over a large fresh buffer, which then
// faults in once per 2 MiB instead of once per 4 KiB page.
void adviseHugePages(char *Buf, uint64_t Bytes);

class HostOutputs {
public:
  // Into[I], where present and large enough, receives output I; Forecast,
  // when given, may have a fresh buffer of the right size ready. The
  // outputs may take MaxBytes together (SessionOptions::MaxOutputBytes).
  HostOutputs(llvm::ArrayRef<MemrefArg> Outputs, OutputAllocator Alloc,
              llvm::ArrayRef<llvm::MutableArrayRef<char>> Into = {},
              OutputForecast *Forecast = nullptr, uint64_t MaxBytes = UINT64_MAX);
  ~HostOutputs();
  HostOutputs(const HostOutputs &) = delete;
  HostOutputs &operator=(const HostOutputs &) = delete;

  size_t size() const { return Outputs.size(); }
  llvm::ArrayRef<MemrefArg> specs() const { return Outputs; }
  const MemrefArg &operator[](size_t I) const { return Outputs[I]; }

  // The bytes of output I's dense values if it has shape Sizes, which must
  // be of its rank.
  llvm::Expected<uint64_t> bytesOf(size_t I, llvm::ArrayRef<int64_t> Sizes) const;

  // Records output I's shape and returns a buffer for its dense values;
  // fails, allocating nothing, when the outputs would take more than
  // MaxBytes.
  llvm::Expected<llvm::MutableArrayRef<char>> allocate(size_t I, llvm::ArrayRef<int64_t> Sizes);

  // Output I stays in the executor as resident Id (not 0), not to be
  // allocated; before the launch.
  void keep(size_t I, uint64_t Id);
  // The resident id output I stays under, or 0 when it comes back.
  uint64_t keptAs(size_t I) const { return I < KeptIds.size() ? KeptIds[I] : 0; }
  // Records kept output I's shape, which must be of its rank.
  llvm::Error keptShape(size_t I, llvm::ArrayRef<int64_t> Sizes);

  // Points every output descriptor at its buffer (a kept one at none); the
  // caller now owns them.
  void commit();

  // The dense bytes of the outputs given buffers so far.
  uint64_t bytesGiven() const { return BytesGiven; }
  // The bytes of each output's values, once all are allocated.
  llvm::ArrayRef<uint64_t> bytes() const { return Bytes; }
  // Outputs that got a buffer the forecast had ready.
  uint64_t readyTaken() const { return ReadyTaken; }

private:
  char *freshBuffer(size_t I, uint64_t Bytes);

  llvm::ArrayRef<MemrefArg> Outputs;
  OutputAllocator Alloc;
  llvm::ArrayRef<llvm::MutableArrayRef<char>> Into;
  OutputForecast *Forecast;
  uint64_t MaxBytes;
  std::vector<char *> Buffers;
  std::vector<uint64_t> Bytes;   // of Buffers[I]'s values
  std::vector<bool> Lent;        // Buffers[I] is Into[I]: never released here
  std::vector<uint64_t> KeptIds; // empty, or one per output: 0 when it comes back
  uint64_t ReadyTaken = 0;
  bool Committed = false;
  uint64_t BytesGiven = 0;
};

} // namespace catalyst::remote

#endif
