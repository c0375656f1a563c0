//===- PeerText.cpp - Showing what a peer wrote ---------------------------===//

#include "PeerText.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

// Code points that steer how text is laid out rather than show: C1, and
// Unicode's bidirectional and line-separator controls, which can make a
// message read otherwise than its bytes say.
bool isLayoutControl(UTF32 C) {
  return (C >= 0x80 && C <= 0x9f) || C == 0x061c || C == 0x200e || C == 0x200f ||
         (C >= 0x2028 && C <= 0x202e) || (C >= 0x2066 && C <= 0x2069);
}

// Appends the ASCII byte B, escaped when it is not printable or would
// end the quote.
void appendAscii(raw_ostream &OS, unsigned char B) {
  if (B == '"' || B == '\\')
    OS << '\\' << char(B);
  else if (B < 0x20 || B == 0x7f)
    OS << "\\x" << format_hex_no_prefix(B, 2);
  else
    OS << char(B);
}

} // namespace

std::string quotePeerText(StringRef Text) {
  std::string Out;
  raw_string_ostream OS(Out);
  OS << '"';
  const auto *Begin = reinterpret_cast<const UTF8 *>(Text.data());
  const UTF8 *End = Begin + Text.size(), *P = Begin;
  while (P < End && size_t(P - Begin) < MaxPeerText) {
    if (*P < 0x80) {
      appendAscii(OS, *P++);
      continue;
    }
    const UTF8 *Start = P;
    UTF32 C = 0;
    if (convertUTF8Sequence(&P, End, &C, strictConversion) != conversionOK) {
      OS << "\\x" << format_hex_no_prefix(*Start, 2);
      P = Start + 1;
    } else if (isLayoutControl(C)) {
      OS << "\\u" << format_hex_no_prefix(C, 4);
    } else {
      OS << StringRef(reinterpret_cast<const char *>(Start), P - Start);
    }
  }
  OS << '"';
  if (P < End)
    OS << " (the first " << (P - Begin) << " of " << Text.size() << " bytes)";
  return Out;
}

} // namespace catalyst::remote::wire
