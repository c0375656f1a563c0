//===- PeerTextTest.cpp - A peer's words, fit to show ---------------------===//
//
// quotePeerText keeps what a person can read as it is and makes visible,
// as an escape, what would steer a terminal or end the quote early.
//
//===----------------------------------------------------------------------===//

#include "wire/PeerText.h"

#include <gtest/gtest.h>

using catalyst::remote::wire::MaxPeerText;
using catalyst::remote::wire::quotePeerText;

namespace {

TEST(PeerTextTest, ReadableTextIsQuotedAsItIs) {
  EXPECT_EQ(quotePeerText("executor at capacity: 64 sessions"),
            "\"executor at capacity: 64 sessions\"");
  EXPECT_EQ(quotePeerText("caf\xc3\xa9 \xe2\x9c\x93"), "\"caf\xc3\xa9 \xe2\x9c\x93\"");
  EXPECT_EQ(quotePeerText(""), "\"\"");
}

TEST(PeerTextTest, WhatCouldSteerATerminalOrEndTheQuoteIsEscaped) {
  EXPECT_EQ(quotePeerText(std::string("a\x1b[2J\tb\x7f\x00", 9)), "\"a\\x1b[2J\\x09b\\x7f\\x00\"");
  EXPECT_EQ(quotePeerText("say \"yes\" \\ no"), "\"say \\\"yes\\\" \\\\ no\"");
  EXPECT_EQ(quotePeerText("\xc2\x9b"
                          "1m \xe2\x80\xae"
                          "x \xe2\x81\xa6"),
            "\"\\u009b1m \\u202ex \\u2066\"");
  // A lone continuation byte, a cut sequence, an overlong NUL, a surrogate.
  EXPECT_EQ(quotePeerText("\x80|\xe2\x80|\xc0\x80|\xed\xa0\x80"),
            "\"\\x80|\\xe2\\x80|\\xc0\\x80|\\xed\\xa0\\x80\"");
}

TEST(PeerTextTest, LongTextIsCutAtACharactersEnd) {
  std::string Long(MaxPeerText - 1, 'a');
  Long += "\xc3\xa9" + std::string(100, 'b');
  std::string Q = quotePeerText(Long);
  EXPECT_EQ(Q, "\"" + std::string(MaxPeerText - 1, 'a') + "\xc3\xa9\" (the first " +
                   std::to_string(MaxPeerText + 1) + " of " + std::to_string(Long.size()) +
                   " bytes)");
}

} // namespace
