//===- Mailbox.cpp - Small messages through memory both ends map ----------===//

#include "Mailbox.h"

#include "Framing.h"

#include <cstring>
#include <sys/mman.h>

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

// A slot: the writer's line (the count it moves and the message's head),
// the reader's line (its count and whether it sleeps), then the message.
// Every field is a 64-bit word both processes reach with atomic operations
// (address-free: they are lock-free), never with plain loads.
enum Field : size_t {
  PostedAt = 0,  // messages posted (writer)
  FramesAt = 8,  // socket frames its writer sent before the latest
  OpCAt = 16,    // the latest message's opcode,
  SeqNoAt = 24,  // sequence number
  SizeAt = 32,   // and plan size
  TakenAt = 64,  // messages taken (reader)
  AsleepAt = 72, // nonzero while the reader sleeps on the socket
};
static_assert(Mailbox::HeadBytes >= AsleepAt + 8, "the head holds both lines");

uint64_t *word(char *Slot, Field F) {
  return reinterpret_cast<uint64_t *>(Slot + F);
}

uint64_t load(char *Slot, Field F, int Order = __ATOMIC_RELAXED) {
  return __atomic_load_n(word(Slot, F), Order);
}

void store(char *Slot, Field F, uint64_t V, int Order = __ATOMIC_RELAXED) {
  __atomic_store_n(word(Slot, F), V, Order);
}

Error broken(const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), "the peer broke the shared mailbox: " + Why);
}

} // namespace

Mailbox::Mailbox(SharedMapping Mapping, End Self)
    : Base(Mapping.Base), Out(Base + (Self == End::Host ? 0 : SlotBytes)),
      In(Base + (Self == End::Host ? SlotBytes : 0)) {
  assert(Mapping.Bytes == Bytes && "a mailbox is mapped whole");
}

Mailbox::~Mailbox() {
  // This mapping, whole: munmap fails only on arguments that are not one.
  ::munmap(Base, Bytes);
}

bool Mailbox::post(uint64_t OpC, uint64_t SeqNo, ArrayRef<char> Plan, uint64_t FramesBefore,
                   bool &Wake) {
  Wake = false;
  if (Plan.size() > Capacity || load(Out, TakenAt, __ATOMIC_ACQUIRE) != Posted)
    return false;
  store(Out, FramesAt, FramesBefore);
  store(Out, OpCAt, OpC);
  store(Out, SeqNoAt, SeqNo);
  store(Out, SizeAt, Plan.size());
  std::memcpy(Out + HeadBytes, Plan.data(), Plan.size());
  // Sequentially consistent with the reader's setAsleep: either its next
  // look sees this message, or this sees that it sleeps.
  store(Out, PostedAt, ++Posted, __ATOMIC_SEQ_CST);
  Wake = load(Out, AsleepAt, __ATOMIC_SEQ_CST) != 0;
  return true;
}

Expected<Mailbox::State> Mailbox::look(uint64_t FramesRead,
                                       function_ref<uint64_t()> BytesWaiting) const {
  uint64_t Now = load(In, PostedAt, __ATOMIC_SEQ_CST);
  if (Now == Taken)
    return State::Empty;
  if (Now != Taken + 1)
    return broken("its count of messages went from " + Twine(Taken) + " to " + Twine(Now));
  uint64_t Frames = load(In, FramesAt);
  if (Frames <= FramesRead)
    return State::Ready;
  uint64_t Ahead = Frames - FramesRead, Waiting = BytesWaiting();
  if (Ahead > Waiting / FrameHeaderSize)
    return broken("its message follows " + Twine(Ahead) + " frames not read yet, but " +
                  Twine(Waiting) + " bytes wait on the socket");
  return State::AfterFrames;
}

Expected<Mailbox::Message> Mailbox::take() {
  // Each field is read once: what is checked is what is used.
  uint64_t Size = load(In, SizeAt);
  if (Size > Capacity)
    return broken("a message of " + Twine(Size) + " bytes, in a slot of " + Twine(Capacity));
  Message M;
  M.OpC = load(In, OpCAt);
  M.SeqNo = load(In, SeqNoAt);
  M.Plan = orc::shared::WrapperFunctionBuffer::allocate(Size);
  std::memcpy(M.Plan.data(), In + HeadBytes, Size);
  store(In, TakenAt, ++Taken, __ATOMIC_RELEASE);
  return M;
}

void Mailbox::setAsleep(bool Asleep) {
  store(In, AsleepAt, Asleep, __ATOMIC_SEQ_CST);
}

} // namespace catalyst::remote::wire
