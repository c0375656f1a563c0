//===- StridedCopy.cpp - Elements from strided places to dense ones -------===//

#include "StridedCopy.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CATALYST_REMOTE_X86_TILES 1
#endif

namespace catalyst::remote::wire {

namespace {

template <size_t N> void copyStrided(char *Dst, const char *Src, uint64_t Count, int64_t Step) {
  for (uint64_t I = 0; I < Count; ++I, Dst += N, Src += Step)
    std::memcpy(Dst, Src, N);
}

// Gathers the tile's destination rows in registers and the stack, then
// writes each whole: the compiler unrolls every loop of a known size.
template <size_t E> void fullTile(char *Dst, const char *Src, const TileShape &S) {
  constexpr size_t T = 64 / E;
  char Rows[T][T * E];
  for (size_t R = 0; R < T; ++R)
    for (size_t C = 0; C < T; ++C)
      std::memcpy(&Rows[C][R * E], Src + int64_t(R) * S.SrcRow + int64_t(C) * S.SrcCol, E);
  for (size_t C = 0; C < T; ++C)
    std::memcpy(Dst + int64_t(C) * S.DstCol, Rows[C], T * E);
}

#ifdef CATALYST_REMOTE_X86_TILES
// A destination row of four doubles; streamed rows skip the cache, and need
// 32-byte alignment.
template <bool Stream> __attribute__((target("avx2"))) inline void putRow(char *At, __m256d Row) {
  if constexpr (Stream)
    _mm256_stream_pd(reinterpret_cast<double *>(At), Row);
  else
    _mm256_storeu_pd(reinterpret_cast<double *>(At), Row);
}

// 4 by 4 doubles, each source row one load and each destination row one
// store.
template <bool Stream>
__attribute__((target("avx2"))) inline void quad8(char *Dst, const char *Src, const TileShape &S) {
  __m256d A = _mm256_loadu_pd(reinterpret_cast<const double *>(Src));
  __m256d B = _mm256_loadu_pd(reinterpret_cast<const double *>(Src + S.SrcRow));
  __m256d C = _mm256_loadu_pd(reinterpret_cast<const double *>(Src + 2 * S.SrcRow));
  __m256d D = _mm256_loadu_pd(reinterpret_cast<const double *>(Src + 3 * S.SrcRow));
  __m256d AB0 = _mm256_unpacklo_pd(A, B), AB1 = _mm256_unpackhi_pd(A, B);
  __m256d CD0 = _mm256_unpacklo_pd(C, D), CD1 = _mm256_unpackhi_pd(C, D);
  putRow<Stream>(Dst, _mm256_permute2f128_pd(AB0, CD0, 0x20));
  putRow<Stream>(Dst + S.DstCol, _mm256_permute2f128_pd(AB1, CD1, 0x20));
  putRow<Stream>(Dst + 2 * S.DstCol, _mm256_permute2f128_pd(AB0, CD0, 0x31));
  putRow<Stream>(Dst + 3 * S.DstCol, _mm256_permute2f128_pd(AB1, CD1, 0x31));
}

// 8 by 8 elements of 8 bytes whose source columns are adjacent: four quads.
template <bool Stream>
__attribute__((target("avx2"))) void fullTile8Avx2(char *Dst, const char *Src, const TileShape &S) {
  quad8<Stream>(Dst, Src, S);
  quad8<Stream>(Dst + 32, Src + 4 * S.SrcRow, S);
  quad8<Stream>(Dst + 4 * S.DstCol, Src + 32, S);
  quad8<Stream>(Dst + 4 * S.DstCol + 32, Src + 4 * S.SrcRow + 32, S);
}

// GCC 12 flags the undefined vectors its own AVX-512 intrinsics start from
// (_mm512_undefined_pd) as used uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
// 8 by 8 doubles in eight registers: each source row one load, each
// destination row one store of a whole line.
template <bool Stream>
__attribute__((target("avx512f"))) void fullTile8Avx512(char *Dst, const char *Src,
                                                        const TileShape &S) {
  __m512d R[8];
  for (int I = 0; I < 8; ++I)
    R[I] = _mm512_loadu_pd(reinterpret_cast<const double *>(Src + I * S.SrcRow));
  // Pairs of rows interleaved: T[2k] holds columns 0, 2, 4, 6 of rows 2k
  // and 2k+1, T[2k+1] columns 1, 3, 5, 7.
  __m512d T[8];
  for (int I = 0; I < 8; I += 2) {
    T[I] = _mm512_unpacklo_pd(R[I], R[I + 1]);
    T[I + 1] = _mm512_unpackhi_pd(R[I], R[I + 1]);
  }
  // Then, for rows 4h to 4h+3, U[4h + k] holds two columns of them, the
  // low half of each vector column Col[k] and the high half Col[k] + 4.
  static constexpr int Col[4] = {0, 2, 1, 3};
  const __m512i Even = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i Odd = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  __m512d U[8];
  for (int H = 0; H < 2; ++H)
    for (int P = 0; P < 2; ++P) {
      U[4 * H + 2 * P] = _mm512_permutex2var_pd(T[4 * H + P], Even, T[4 * H + P + 2]);
      U[4 * H + 2 * P + 1] = _mm512_permutex2var_pd(T[4 * H + P], Odd, T[4 * H + P + 2]);
    }
  // Rows 0-3 of a column from U[k], rows 4-7 from U[4 + k].
  for (int K = 0; K < 4; ++K) {
    __m512d Lo = _mm512_shuffle_f64x2(U[K], U[4 + K], 0x44);
    __m512d Hi = _mm512_shuffle_f64x2(U[K], U[4 + K], 0xEE);
    double *A = reinterpret_cast<double *>(Dst + Col[K] * S.DstCol);
    double *B = reinterpret_cast<double *>(Dst + (Col[K] + 4) * S.DstCol);
    if constexpr (Stream) {
      _mm512_stream_pd(A, Lo);
      _mm512_stream_pd(B, Hi);
    } else {
      _mm512_storeu_pd(A, Lo);
      _mm512_storeu_pd(B, Hi);
    }
  }
}
#pragma GCC diagnostic pop
#endif

} // namespace

void copyElements(char *Dst, const char *Src, uint64_t Count, int64_t Step, size_t ElemSize) {
  switch (ElemSize) {
  case 1:
    return copyStrided<1>(Dst, Src, Count, Step);
  case 2:
    return copyStrided<2>(Dst, Src, Count, Step);
  case 4:
    return copyStrided<4>(Dst, Src, Count, Step);
  case 8:
    return copyStrided<8>(Dst, Src, Count, Step);
  case 16:
    return copyStrided<16>(Dst, Src, Count, Step);
  }
  for (uint64_t I = 0; I < Count; ++I, Dst += ElemSize, Src += Step)
    std::memcpy(Dst, Src, ElemSize);
}

int64_t tileEdge(size_t ElemSize) {
  return ElemSize >= 64 ? 1 : int64_t(64 / ElemSize);
}

FullTileFn fullTileFor(size_t ElemSize, int64_t SrcCol, bool Stream) {
  (void)SrcCol; // only vector tiles need the source's columns adjacent
  (void)Stream; // and only they stream
  switch (ElemSize) {
  case 1:
    return fullTile<1>;
  case 2:
    return fullTile<2>;
  case 4:
    return fullTile<4>;
  case 8:
#ifdef CATALYST_REMOTE_X86_TILES
    if (SrcCol == 8 && __builtin_cpu_supports("avx512f"))
      return Stream ? fullTile8Avx512<true> : fullTile8Avx512<false>;
    if (SrcCol == 8 && __builtin_cpu_supports("avx2"))
      return Stream ? fullTile8Avx2<true> : fullTile8Avx2<false>;
#endif
    return fullTile<8>;
  case 16:
    return fullTile<16>;
  }
  return nullptr;
}

void fenceStreams() {
#ifdef CATALYST_REMOTE_X86_TILES
  _mm_sfence();
#endif
}

void copyTile(char *Dst, const char *Src, const TileShape &S, int64_t Rows, int64_t Cols,
              size_t ElemSize) {
  for (int64_t C = 0; C < Cols; ++C)
    copyElements(Dst + C * S.DstCol, Src + C * S.SrcCol, uint64_t(Rows), S.SrcRow, ElemSize);
}

} // namespace catalyst::remote::wire
