//===- MailboxTest.cpp - The shared mailbox's slots, both ends ------------===//
//
// Both ends of a mailbox in this process, each over its own mapping of one
// sealed memfd, as a host and its executor map it: what one posts the other
// takes, in order with the socket's frames, and a peer that scribbles over
// the slots is caught before anything it wrote is used. The sessions that
// go through a mailbox are in SharedMemoryTest.
//
//===----------------------------------------------------------------------===//

#include "wire/Mailbox.h"

#include "Text.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace catalyst::remote::wire;
using namespace llvm;

namespace {

class MailboxTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto Fd = createSealedMemory(Mailbox::Bytes, "mailbox-test");
    ASSERT_TRUE(bool(Fd)) << toString(Fd.takeError());
    for (auto *End : {&Host, &Executor}) {
      auto M = mapSealedMemory(*Fd, Mailbox::Bytes, Mailbox::Bytes, /*Writable=*/true);
      ASSERT_TRUE(bool(M)) << toString(M.takeError());
      Raw = M->Base; // the executor's mapping, last: the peer scribbles through it
      *End =
          std::make_unique<Mailbox>(*M, End == &Host ? Mailbox::End::Host : Mailbox::End::Executor);
    }
    ::close(*Fd);
  }

  // The word at Offset of the slot the host writes, as the executor maps it.
  void scribble(size_t Offset, uint64_t V) {
    *reinterpret_cast<volatile uint64_t *>(Raw + Offset) = V;
  }

  // As the transport looks, with the frames a message may follow all
  // there on the socket.
  Mailbox::State look(Mailbox &B, uint64_t FramesRead = 0) {
    auto S = B.look(FramesRead, [] { return uint64_t(64) << 10; });
    EXPECT_TRUE(bool(S)) << toString(S.takeError());
    return S ? *S : Mailbox::State::Empty;
  }

  std::unique_ptr<Mailbox> Host, Executor;
  char *Raw = nullptr;
};

std::string text(const Mailbox::Message &M) {
  return std::string(M.Plan.data(), M.Plan.size());
}

TEST_F(MailboxTest, WhatOneEndPostsTheOtherTakesOnceEachWay) {
  bool Wake = true;
  EXPECT_EQ(look(*Executor), Mailbox::State::Empty);
  ASSERT_TRUE(Host->post(0x43, 7, StringRef("a launch"), 0, Wake));
  EXPECT_FALSE(Wake) << "nobody said it sleeps";
  EXPECT_EQ(look(*Host), Mailbox::State::Empty) << "the host's own slot is not its inbox";
  ASSERT_EQ(look(*Executor), Mailbox::State::Ready);
  auto M = Executor->take();
  ASSERT_TRUE(bool(M)) << toString(M.takeError());
  EXPECT_EQ(M->OpC, 0x43u);
  EXPECT_EQ(M->SeqNo, 7u);
  EXPECT_EQ(text(*M), "a launch");
  EXPECT_EQ(look(*Executor), Mailbox::State::Empty) << "taken once";
  ASSERT_TRUE(Executor->post(0x44, 7, StringRef("its result"), 0, Wake));
  ASSERT_EQ(look(*Host), Mailbox::State::Ready);
  auto R = Host->take();
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(text(*R), "its result");
}

// A slot holds one message: the next goes on the socket until the reader
// has taken it, and so does one too large for the slot.
TEST_F(MailboxTest, AFullSlotOrALargeMessageIsLeftToTheSocket) {
  bool Wake = false;
  ASSERT_TRUE(Host->post(0x43, 1, StringRef("first"), 0, Wake));
  EXPECT_FALSE(Host->post(0x43, 2, StringRef("second"), 0, Wake));
  ASSERT_TRUE(bool(Executor->take()));
  ASSERT_TRUE(Host->post(0x43, 2, StringRef("second"), 0, Wake));
  ASSERT_TRUE(bool(Executor->take()));
  std::string Large(Mailbox::Capacity + 1, 'x');
  EXPECT_FALSE(Host->post(0x43, 3, Large, 0, Wake));
  Large.pop_back();
  EXPECT_TRUE(Host->post(0x43, 3, Large, 0, Wake)) << "a full slot's worth fits";
  auto M = Executor->take();
  ASSERT_TRUE(bool(M)) << toString(M.takeError());
  EXPECT_EQ(text(*M), Large);
}

// A message waits for the socket frames its writer sent before it.
TEST_F(MailboxTest, AMessageWaitsForTheFramesSentBeforeIt) {
  bool Wake = false;
  ASSERT_TRUE(Host->post(0x43, 1, StringRef("after two frames"), 2, Wake));
  EXPECT_EQ(look(*Executor, 0), Mailbox::State::AfterFrames);
  EXPECT_EQ(look(*Executor, 1), Mailbox::State::AfterFrames);
  EXPECT_EQ(look(*Executor, 2), Mailbox::State::Ready);
}

// The writer sees that the reader sleeps, so that it rings; once the
// reader is up again, it does not.
TEST_F(MailboxTest, AWriterSeesThatItsReaderSleeps) {
  bool Wake = false;
  Executor->setAsleep(true);
  ASSERT_TRUE(Host->post(0x43, 1, StringRef("wake up"), 0, Wake));
  EXPECT_TRUE(Wake);
  Executor->setAsleep(false);
  ASSERT_TRUE(bool(Executor->take()));
  ASSERT_TRUE(Host->post(0x43, 2, StringRef("awake"), 0, Wake));
  EXPECT_FALSE(Wake);
}

// Offsets of the slot's head (Mailbox.cpp): the count of messages posted,
// the socket frames sent before the message, and the message's size.
constexpr size_t PostedAt = 0, FramesAt = 8, SizeAt = 32;

// A message said to follow more frames than the socket holds would be
// waited for until the frames came, that is for ever: each of them went
// whole before the message was posted, a header at least.
TEST_F(MailboxTest, AMessageBehindFramesTheSocketCannotHoldIsRefused) {
  bool Wake = false;
  ASSERT_TRUE(Host->post(0x43, 1, StringRef("after two frames"), 2, Wake));
  auto Waiting = [] { return uint64_t(64); }; // two headers
  auto S = Executor->look(0, Waiting);
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(*S, Mailbox::State::AfterFrames);
  scribble(FramesAt, uint64_t(1) << 40);
  S = Executor->look(0, Waiting);
  ASSERT_FALSE(bool(S));
  EXPECT_TRUE(mentions(toString(S.takeError()),
                       "the peer broke the shared mailbox: its message follows 1099511627776 "
                       "frames not read yet, but 64 bytes wait on the socket"));
}

TEST_F(MailboxTest, ACountThatJumpsIsThePeerBreakingTheProtocol) {
  scribble(PostedAt, 5);
  auto S = Executor->look(0, [] { return uint64_t(0); });
  ASSERT_FALSE(bool(S));
  EXPECT_TRUE(mentions(toString(S.takeError()), "count of messages went from 0 to 5"));
}

TEST_F(MailboxTest, AMessageLargerThanItsSlotIsRefusedBeforeItIsRead) {
  bool Wake = false;
  ASSERT_TRUE(Host->post(0x43, 1, StringRef("small"), 0, Wake));
  scribble(SizeAt, Mailbox::Capacity + 1);
  ASSERT_EQ(look(*Executor), Mailbox::State::Ready);
  auto M = Executor->take();
  ASSERT_FALSE(bool(M));
  EXPECT_TRUE(mentions(toString(M.takeError()), "a message of 32641 bytes, in a slot of 32640"));
}

} // namespace
