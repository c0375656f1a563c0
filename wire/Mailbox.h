//===- Mailbox.h - Small messages through memory both ends map --*- C++ -*-===//
//
// Between a host and an executor on one machine, a launch's plan and its
// result are a few hundred bytes, yet over the local socket each costs a
// system call to send and two or three to notice and read: most of a small
// launch. A Mailbox is memory both processes map (a sealed memfd the
// executor passes like its slabs) holding one slot each way. The writer
// fills its slot and moves a count; the reader, spinning while it waits
// (TransportOptions::Spin), sees the count move without a system call. A
// reader done spinning says so in its slot before it sleeps on the socket;
// a writer that sees it rings the doorbell there (SocketTransport), whose
// wake-up the sleeper needs anyway for heartbeats and hang-ups.
//
// Order: a message posted here carries how many frames its writer had sent
// on the socket before it, and the reader takes it only once it has read as
// many (a SharedSlab passing a new output area comes before the result that
// uses it). The other way round, the reader looks here before it handles
// each frame it sees on the socket: a message posted before that frame was
// sent is visible by then.
//
// Trust: the peer can write any byte of the mapping at any time. Each side
// keeps its own counts; the reader copies a message out once, its size
// checked, before anything decodes it; a count that moves by other than one
// is the peer breaking the protocol. A slot the peer has not freed makes
// the writer use the socket.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_MAILBOX_H
#define CATALYST_REMOTE_WIRE_MAILBOX_H

#include "SharedMemory.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace catalyst::remote::wire {

class Mailbox {
public:
  // The mapping's size, exactly: two slots of 32 KiB.
  static constexpr uint64_t Bytes = 64 << 10;
  static constexpr uint64_t SlotBytes = Bytes / 2;
  static constexpr uint64_t HeadBytes = 128;
  // The largest message a slot holds; larger ones go on the socket.
  static constexpr uint64_t Capacity = SlotBytes - HeadBytes;

  // Which end this is: the host writes the first slot and reads the second.
  enum class End { Host, Executor };

  // Takes Mapping (Bytes long), unmapped with this.
  Mailbox(SharedMapping Mapping, End Self);
  ~Mailbox();
  Mailbox(const Mailbox &) = delete;
  Mailbox &operator=(const Mailbox &) = delete;

  // The writer's side (one writer at a time: the transport's send lock).
  // Posts a message when it fits and the peer took the last one; false
  // otherwise, and it goes on the socket. FramesBefore: the frames this end
  // sent on the socket so far. Wake says that the reader sleeps on the
  // socket and must be rung.
  bool post(uint64_t OpC, uint64_t SeqNo, llvm::ArrayRef<char> Plan, uint64_t FramesBefore,
            bool &Wake);

  // The reader's side (one reader at a time: the transport's read lock).
  enum class State {
    Empty,      // nothing posted
    Ready,      // a message to take now
    AfterFrames // a message, behind frames still to read on the socket
  };
  // FramesRead: the frames this end read from the socket so far;
  // BytesWaiting, asked only for a message behind frames, says how many
  // bytes wait unread on the socket. Those frames were sent whole before
  // the message was posted, a header at least each: a message behind more
  // than the bytes waiting can hold is the peer breaking the protocol,
  // not frames still to come.
  llvm::Expected<State> look(uint64_t FramesRead,
                             llvm::function_ref<uint64_t()> BytesWaiting) const;
  struct Message {
    uint64_t OpC = 0, SeqNo = 0;
    llvm::orc::shared::WrapperFunctionBuffer Plan;
  };
  // The message look() found Ready, copied out; the slot is free again.
  llvm::Expected<Message> take();
  // Says whether this end is about to sleep on the socket (or has woken).
  // Setting it orders before the look() that follows, so that either that
  // look sees a message posted meanwhile or its writer sees the flag.
  void setAsleep(bool Asleep);

private:
  char *const Base;
  char *const Out; // the slot this end writes
  char *const In;  // the slot this end reads
  // This end's own counts: messages posted to Out, and taken from In.
  uint64_t Posted = 0; // the writer's (send lock)
  uint64_t Taken = 0;  // the reader's (read lock)
};

} // namespace catalyst::remote::wire

#endif
