//===- StridedCopy.cpp - Elements from strided places to dense ones -------===//

#include "StridedCopy.h"

#include <cassert>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CATALYST_REMOTE_X86_TILES 1
#endif

namespace catalyst::remote::copy {

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
// Half a line of a destination row; streamed stores skip the cache, and
// need 32-byte alignment.
template <bool Stream> __attribute__((target("avx2"))) inline void putHalf(char *At, __m256i V) {
  if constexpr (Stream)
    _mm256_stream_si256(reinterpret_cast<__m256i *>(At), V);
  else
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(At), V);
}

template <bool Stream> __attribute__((target("avx2"))) inline void putHalf(char *At, __m256d V) {
  putHalf<Stream>(At, _mm256_castpd_si256(V));
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
  putHalf<Stream>(Dst, _mm256_permute2f128_pd(AB0, CD0, 0x20));
  putHalf<Stream>(Dst + S.DstCol, _mm256_permute2f128_pd(AB1, CD1, 0x20));
  putHalf<Stream>(Dst + 2 * S.DstCol, _mm256_permute2f128_pd(AB0, CD0, 0x31));
  putHalf<Stream>(Dst + 3 * S.DstCol, _mm256_permute2f128_pd(AB1, CD1, 0x31));
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
// A whole line of a destination row; streamed stores need 64-byte
// alignment.
template <bool Stream> __attribute__((target("avx512f"))) inline void putLine(char *At, __m512i V) {
  if constexpr (Stream)
    _mm512_stream_si512(reinterpret_cast<__m512i *>(At), V);
  else
    _mm512_storeu_si512(At, V);
}

// Out[L] holds lane L (128 bits) of In[0] to In[3], in that order: a 4 by 4
// transpose of lanes.
__attribute__((target("avx512f"))) inline void transposeLanes(const __m512i (&In)[4],
                                                              __m512i (&Out)[4]) {
  // Lanes 0-1 and 2-3 of In[0] and In[1] (T[0], T[1]), of In[2] and In[3]
  // (T[2], T[3]).
  __m512i T[4] = {
      _mm512_shuffle_i64x2(In[0], In[1], 0x44), _mm512_shuffle_i64x2(In[0], In[1], 0xEE),
      _mm512_shuffle_i64x2(In[2], In[3], 0x44), _mm512_shuffle_i64x2(In[2], In[3], 0xEE)};
  // Even lanes take lanes 0 and 2 of a pair, odd ones lanes 1 and 3.
  for (int L = 0; L < 4; ++L)
    Out[L] = L % 2 ? _mm512_shuffle_i64x2(T[L / 2], T[2 + L / 2], 0xDD)
                   : _mm512_shuffle_i64x2(T[L / 2], T[2 + L / 2], 0x88);
}

// 8 by 8 doubles in eight registers: each source row one load, each
// destination row one store of a whole line.
template <bool Stream>
__attribute__((target("avx512f"))) void fullTile8Avx512(char *Dst, const char *Src,
                                                        const TileShape &S) {
  __m512d R[8];
  for (int I = 0; I < 8; ++I)
    R[I] = _mm512_loadu_pd(reinterpret_cast<const double *>(Src + I * S.SrcRow));
  // Pairs of rows interleaved: lane L of Even[k] holds column 2L of rows 2k
  // and 2k+1, of Odd[k] column 2L + 1; a lane transpose then gathers each
  // column whole.
  __m512i Even[4], Odd[4], Cols[4];
  for (int K = 0; K < 4; ++K) {
    Even[K] = _mm512_castpd_si512(_mm512_unpacklo_pd(R[2 * K], R[2 * K + 1]));
    Odd[K] = _mm512_castpd_si512(_mm512_unpackhi_pd(R[2 * K], R[2 * K + 1]));
  }
  transposeLanes(Even, Cols);
  for (int L = 0; L < 4; ++L)
    putLine<Stream>(Dst + 2 * L * S.DstCol, Cols[L]);
  transposeLanes(Odd, Cols);
  for (int L = 0; L < 4; ++L)
    putLine<Stream>(Dst + (2 * L + 1) * S.DstCol, Cols[L]);
}

// 4 by 4 elements of 16 bytes whose source columns are adjacent: each
// source row one load, each destination row one store of a whole line.
template <bool Stream>
__attribute__((target("avx512f"))) void fullTile16Avx512(char *Dst, const char *Src,
                                                         const TileShape &S) {
  __m512i R[4], Cols[4];
  for (int I = 0; I < 4; ++I)
    R[I] = _mm512_loadu_si512(Src + I * S.SrcRow);
  transposeLanes(R, Cols);
  for (int C = 0; C < 4; ++C)
    putLine<Stream>(Dst + C * S.DstCol, Cols[C]);
}

// 16 by 16 floats whose source columns are adjacent: each source row one
// load, each destination row one store of a whole line.
template <bool Stream>
__attribute__((target("avx512f"))) void fullTile4Avx512(char *Dst, const char *Src,
                                                        const TileShape &S) {
  __m512 R[16];
  for (int I = 0; I < 16; ++I)
    R[I] = _mm512_loadu_ps(reinterpret_cast<const float *>(Src + I * S.SrcRow));
  // Within each lane, as in octet4: Q[q][c] holds, in lane L, column
  // 4L + c of rows 4q to 4q+3.
  __m512i Q[4][4];
  for (int Q4 = 0; Q4 < 4; ++Q4) {
    const __m512 *Rows = R + 4 * Q4;
    __m512 T0 = _mm512_unpacklo_ps(Rows[0], Rows[1]), T1 = _mm512_unpackhi_ps(Rows[0], Rows[1]);
    __m512 T2 = _mm512_unpacklo_ps(Rows[2], Rows[3]), T3 = _mm512_unpackhi_ps(Rows[2], Rows[3]);
    Q[Q4][0] = _mm512_castps_si512(_mm512_shuffle_ps(T0, T2, 0x44));
    Q[Q4][1] = _mm512_castps_si512(_mm512_shuffle_ps(T0, T2, 0xEE));
    Q[Q4][2] = _mm512_castps_si512(_mm512_shuffle_ps(T1, T3, 0x44));
    Q[Q4][3] = _mm512_castps_si512(_mm512_shuffle_ps(T1, T3, 0xEE));
  }
  // Column 4L + c: lane L of Q[0][c] to Q[3][c].
  for (int C = 0; C < 4; ++C) {
    __m512i In[4] = {Q[0][C], Q[1][C], Q[2][C], Q[3][C]}, Out[4];
    transposeLanes(In, Out);
    for (int L = 0; L < 4; ++L)
      putLine<Stream>(Dst + (4 * L + C) * S.DstCol, Out[L]);
  }
}
#pragma GCC diagnostic pop

// The same with AVX2: a row is two halves of two elements each.
template <bool Stream>
__attribute__((target("avx2"))) void fullTile16Avx2(char *Dst, const char *Src,
                                                    const TileShape &S) {
  for (int Half = 0; Half < 2; ++Half) { // destination halves: rows 0-1, rows 2-3
    const char *A = Src + 2 * Half * S.SrcRow, *B = A + S.SrcRow;
    __m256i A01 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(A));
    __m256i A23 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(A + 32));
    __m256i B01 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(B));
    __m256i B23 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(B + 32));
    char *To = Dst + 32 * Half;
    putHalf<Stream>(To, _mm256_permute2x128_si256(A01, B01, 0x20));
    putHalf<Stream>(To + S.DstCol, _mm256_permute2x128_si256(A01, B01, 0x31));
    putHalf<Stream>(To + 2 * S.DstCol, _mm256_permute2x128_si256(A23, B23, 0x20));
    putHalf<Stream>(To + 3 * S.DstCol, _mm256_permute2x128_si256(A23, B23, 0x31));
  }
}

// 8 by 8 floats whose source columns are adjacent, a quarter of a 16 by 16
// tile: each source row one load, each destination row one store of half a
// line.
template <bool Stream>
__attribute__((target("avx2"))) inline void octet4(char *Dst, const char *Src, const TileShape &S) {
  __m256 R[8];
  for (int I = 0; I < 8; ++I)
    R[I] = _mm256_loadu_ps(reinterpret_cast<const float *>(Src + I * S.SrcRow));
  // Within each 128-bit lane: T[2k] interleaves columns 0-1 of rows 2k and
  // 2k+1, T[2k+1] columns 2-3; then Q[k] holds column k of rows 0-3 (and
  // k + 4 in the high lane), Q[4 + k] the same of rows 4-7.
  __m256 T[8], Q[8];
  for (int I = 0; I < 8; I += 2) {
    T[I] = _mm256_unpacklo_ps(R[I], R[I + 1]);
    T[I + 1] = _mm256_unpackhi_ps(R[I], R[I + 1]);
  }
  for (int H = 0; H < 2; ++H)
    for (int P = 0; P < 2; ++P) {
      Q[4 * H + 2 * P] = _mm256_shuffle_ps(T[4 * H + P], T[4 * H + P + 2], 0x44);
      Q[4 * H + 2 * P + 1] = _mm256_shuffle_ps(T[4 * H + P], T[4 * H + P + 2], 0xEE);
    }
  for (int C = 0; C < 4; ++C) {
    putHalf<Stream>(Dst + C * S.DstCol,
                    _mm256_castps_si256(_mm256_permute2f128_ps(Q[C], Q[4 + C], 0x20)));
    putHalf<Stream>(Dst + (C + 4) * S.DstCol,
                    _mm256_castps_si256(_mm256_permute2f128_ps(Q[C], Q[4 + C], 0x31)));
  }
}

// 16 by 16 floats: four octets, the two that fill the same destination
// lines one after the other.
template <bool Stream>
__attribute__((target("avx2"))) void fullTile4Avx2(char *Dst, const char *Src, const TileShape &S) {
  for (int C0 = 0; C0 < 16; C0 += 8)
    for (int R0 = 0; R0 < 16; R0 += 8)
      octet4<Stream>(Dst + C0 * S.DstCol + R0 * 4, Src + R0 * S.SrcRow + C0 * 4, S);
}
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

namespace {

enum class Isa { Any, Avx2, Avx512 };

bool runs(Isa I) {
  switch (I) {
  case Isa::Any:
    return true;
#ifdef CATALYST_REMOTE_X86_TILES
  case Isa::Avx2:
    return __builtin_cpu_supports("avx2");
  case Isa::Avx512:
    return __builtin_cpu_supports("avx512f");
#else
  default:
    return false;
#endif
  }
  return false;
}

struct TileKind {
  size_t ElemSize;
  Isa Needs;
  FullTileFn Cached, Streamed; // Streamed: null where the kind cannot stream
};

// Per element size, fastest first. Vector kinds load whole source rows, so
// they need the source's columns adjacent; the plain kinds, last, need
// nothing and never stream.
constexpr TileKind Kinds[] = {
#ifdef CATALYST_REMOTE_X86_TILES
    {4, Isa::Avx512, fullTile4Avx512<false>, fullTile4Avx512<true>},
    {4, Isa::Avx2, fullTile4Avx2<false>, fullTile4Avx2<true>},
    {8, Isa::Avx512, fullTile8Avx512<false>, fullTile8Avx512<true>},
    {8, Isa::Avx2, fullTile8Avx2<false>, fullTile8Avx2<true>},
    {16, Isa::Avx512, fullTile16Avx512<false>, fullTile16Avx512<true>},
    {16, Isa::Avx2, fullTile16Avx2<false>, fullTile16Avx2<true>},
#endif
    {1, Isa::Any, fullTile<1>, nullptr},
    {2, Isa::Any, fullTile<2>, nullptr},
    {4, Isa::Any, fullTile<4>, nullptr},
    {8, Isa::Any, fullTile<8>, nullptr},
    {16, Isa::Any, fullTile<16>, nullptr},
};

} // namespace

size_t fullTilesFor(size_t ElemSize, int64_t SrcCol, bool Stream, FullTileFn (&Out)[MaxTileKinds]) {
  size_t N = 0;
  for (const TileKind &K : Kinds) {
    bool Vector = K.Needs != Isa::Any;
    if (K.ElemSize != ElemSize || (Vector && SrcCol != int64_t(ElemSize)) || !runs(K.Needs))
      continue;
    assert(N < MaxTileKinds && "Kinds has more of one size than MaxTileKinds");
    Out[N++] = Stream && K.Streamed ? K.Streamed : K.Cached;
  }
  return N;
}

FullTileFn fullTileFor(size_t ElemSize, int64_t SrcCol, bool Stream) {
  FullTileFn Choices[MaxTileKinds];
  return fullTilesFor(ElemSize, SrcCol, Stream, Choices) ? Choices[0] : nullptr;
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

} // namespace catalyst::remote::copy
