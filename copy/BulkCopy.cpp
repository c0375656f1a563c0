//===- BulkCopy.cpp - Copies too large to stay in the cache ---------------===//

#include "BulkCopy.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CATALYST_REMOTE_X86_STREAMS 1
#endif

namespace catalyst::remote::copy {

namespace {

constexpr uint64_t Line = 64, Page = 4096;

#ifdef CATALYST_REMOTE_X86_STREAMS
// One destination line, which must be aligned, around the cache; SSE2,
// which every x86-64 processor has.
inline void streamLine(char *Dst, const char *Src) {
  for (uint64_t Q = 0; Q < Line; Q += 16)
    _mm_stream_si128(reinterpret_cast<__m128i *>(Dst + Q),
                     _mm_loadu_si128(reinterpret_cast<const __m128i *>(Src + Q)));
}

// Four pages side by side keep four streams of reads open at once, which
// memory serves in parallel, faster than one page at a time (copy_us of
// pack/transposed/<size>, PackBench.cpp, times this copy).
void streamLines(char *Dst, const char *Src, uint64_t Bytes) {
  constexpr uint64_t Block = 4 * Page;
  for (; Bytes >= Block; Bytes -= Block, Dst += Block, Src += Block)
    for (uint64_t L = 0; L < Page; L += Line)
      for (uint64_t P = 0; P < Block; P += Page)
        streamLine(Dst + P + L, Src + P + L);
  for (; Bytes >= Line; Bytes -= Line, Dst += Line, Src += Line)
    streamLine(Dst, Src);
  _mm_sfence();
}
#endif

} // namespace

void copyBulk(char *Dst, const char *Src, uint64_t Bytes) {
#ifdef CATALYST_REMOTE_X86_STREAMS
  if (Bytes >= BulkCopyBytes) {
    uint64_t Head = (Line - reinterpret_cast<uintptr_t>(Dst) % Line) % Line;
    std::memcpy(Dst, Src, Head);
    uint64_t Lines = (Bytes - Head) / Line * Line;
    streamLines(Dst + Head, Src + Head, Lines);
    Dst += Head + Lines, Src += Head + Lines, Bytes -= Head + Lines;
  }
#endif
  std::memcpy(Dst, Src, Bytes);
}

} // namespace catalyst::remote::copy
