//===- BulkCopyTest.cpp - Large copies byte for byte ----------------------===//
//
// copyBulk takes another path from BulkCopyBytes on: a head up to the destination's
// next line, four pages at a time, single lines, then a tail. Each size and
// misalignment below lands in a different mix of them; every byte must
// arrive and no byte around the destination may change.
//
//===----------------------------------------------------------------------===//

#include "copy/BulkCopy.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <vector>

using catalyst::remote::copy::BulkCopyBytes;
using catalyst::remote::copy::copyBulk;

namespace {

constexpr uint64_t Margin = 128;

TEST(BulkCopyTest, EverySizeAndMisalignmentCopiesExactly) {
  const uint64_t Sizes[] = {
      0, 1, 63, 4096, BulkCopyBytes - 1, BulkCopyBytes, BulkCopyBytes + 4 * 4096 + 3 * 64 + 5};
  uint64_t Largest = Sizes[sizeof(Sizes) / sizeof(Sizes[0]) - 1];
  std::vector<char> Src(Largest + Margin), Dst(Largest + 2 * Margin);
  for (uint64_t I = 0; I < Src.size(); ++I)
    Src[I] = char(I * 7 + I / 4099);
  for (uint64_t Bytes : Sizes)
    for (uint64_t DstShift : {0, 1, 63})
      for (uint64_t SrcShift : {0, 5}) {
        SCOPED_TRACE(testing::Message()
                     << Bytes << " bytes, destination +" << DstShift << ", source +" << SrcShift);
        std::fill(Dst.begin(), Dst.end(), char(0x5a));
        // The vector's storage is at least 16-byte aligned; Margin keeps
        // the shifts inside it.
        char *To = Dst.data() + Margin + DstShift;
        copyBulk(To, Src.data() + SrcShift, Bytes);
        for (uint64_t I = 0; I < Bytes; ++I)
          ASSERT_EQ(To[I], Src[SrcShift + I]) << "byte " << I;
        for (char *P = Dst.data(); P < To; ++P)
          ASSERT_EQ(*P, char(0x5a)) << "written before the destination";
        for (char *P = To + Bytes; P < Dst.data() + Dst.size(); ++P)
          ASSERT_EQ(*P, char(0x5a)) << "written past the destination";
      }
}

} // namespace
