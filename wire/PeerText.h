//===- PeerText.h - Showing what a peer wrote -------------------*- C++ -*-===//
//
// An executor may say why it refuses a connection or hangs up, and its
// words reach the host's error messages and, through them, terminals and
// logs. A peer that has not authenticated may write anything there: escape
// sequences that rewrite the screen or the window title, a carriage return
// that hides what came before, a closing quote after which its words pass
// for the host's own. quotePeerText makes such text fit to show, and
// marks it as the peer's by quoting it.
//
//   Msg = "the executor refused the connection, saying: " + quotePeerText(Why);
//
// Thread-safety: a pure function.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_PEERTEXT_H
#define CATALYST_REMOTE_WIRE_PEERTEXT_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <string>

namespace catalyst::remote::wire {

// At most this many bytes of a peer's text are shown; a reason is a
// sentence.
inline constexpr size_t MaxPeerText = 512;

// Text between double quotes, cleaned. Control characters (C0, DEL, and
// C1, which terminals obey as they obey ESC) and bytes that are not part
// of valid UTF-8 become \xNN; Unicode's bidirectional and line-separator
// controls become \uNNNN; '"' and '\' are escaped, so the quote ends only
// where this end ends it. Text longer than MaxPeerText bytes is cut at a
// character's end, and the cut said after the quote.
std::string quotePeerText(llvm::StringRef Text);

} // namespace catalyst::remote::wire

#endif
