//===- WireCodec.h - SPS values and raw spans in one buffer -----*- C++ -*-===//
//
// Launch messages carry large payloads between small SPS-encoded heads. The
// payload bytes are packed straight into (or read straight out of) the
// message buffer; an SPSSequence<char> is a u64 length followed by the
// bytes, so a peer may decode either form.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_WIRECODEC_H
#define CATALYST_REMOTE_WIRE_WIRECODEC_H

#include "llvm/ExecutionEngine/Orc/Shared/SimplePackedSerialization.h"

namespace catalyst::remote::wire {

class WireWriter {
public:
  WireWriter(char *Begin, size_t Size) : Pos(Begin), End(Begin + Size) {}

  template <typename... SPSTs, typename... Ts> bool put(const Ts &...Vs) {
    using Args = llvm::orc::shared::SPSArgList<SPSTs...>;
    size_t N = Args::size(Vs...);
    llvm::orc::shared::SPSOutputBuffer OB(Pos, End - Pos);
    if (!Args::serialize(OB, Vs...))
      return false;
    Pos += N;
    return true;
  }

  // Reserves N raw bytes and returns where they go, or null when out of room.
  char *take(size_t N) {
    if (size_t(End - Pos) < N)
      return nullptr;
    char *P = Pos;
    Pos += N;
    return P;
  }

  bool full() const { return Pos == End; }

private:
  char *Pos;
  char *End;
};

class WireReader {
public:
  WireReader(const char *Begin, size_t Size) : IB(Begin, Size) {}

  template <typename... SPSTs, typename... Ts> bool get(Ts &...Vs) {
    return llvm::orc::shared::SPSArgList<SPSTs...>::deserialize(IB, Vs...);
  }

  // Returns N raw bytes in place, or null when the buffer is shorter.
  const char *take(size_t N) {
    const char *P = IB.data();
    return IB.skip(N) ? P : nullptr;
  }

private:
  llvm::orc::shared::SPSInputBuffer IB;
};

} // namespace catalyst::remote::wire

#endif
