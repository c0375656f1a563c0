//===- ParentWatchTest.cpp - Seeing the process that started us end -------===//
//
// executor/ParentWatch.h alone: a watched parent that lives is not gone; one
// that ends wakes the watch's descriptor and is gone. The end is made real:
// a middle process forks the watcher and exits, leaving it to init.
//
//===----------------------------------------------------------------------===//

#include "../../executor/ParentWatch.h"

#include <chrono>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace catalyst::remote::executor;

namespace {

TEST(ParentWatchTest, ALivingParentIsNotGone) {
  ParentWatch W = ParentWatch::start(::getppid());
  EXPECT_TRUE(W.watching());
  EXPECT_FALSE(W.gone());
  EXPECT_FALSE(ParentWatch().gone()) << "nothing watched is never gone";
}

// The watcher's exit status: 0 when it saw its parent end within 10 s,
// woken by its pidfd where it has one; 1 when it never did; 2 when it was
// told so too early.
int watchMiddleEnd(int Ready) {
  ParentWatch W = ParentWatch::start(::getppid());
  if (W.gone())
    return 2;
  char Byte = 'x';
  if (::write(Ready, &Byte, 1) != 1)
    return 1;
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!W.gone() && std::chrono::steady_clock::now() < Deadline) {
    pollfd P{W.fd(), POLLIN, 0};
    ::poll(&P, 1, W.fd() >= 0 ? 10000 : W.pollTimeoutMs());
  }
  return W.gone() ? 0 : 1;
}

TEST(ParentWatchTest, AParentThatEndsIsGone) {
  int Ready[2], Result[2];
  ASSERT_EQ(::pipe(Ready), 0);
  ASSERT_EQ(::pipe(Result), 0);
  pid_t Middle = ::fork();
  ASSERT_GE(Middle, 0);
  if (Middle == 0) {
    pid_t Watcher = ::fork();
    if (Watcher == 0) {
      char Status = char(watchMiddleEnd(Ready[1]));
      ::_exit(::write(Result[1], &Status, 1) == 1 ? 0 : 1);
    }
    // Ends once the watcher is watching: its end is what the watch sees.
    char Byte;
    ::_exit(Watcher > 0 && ::read(Ready[0], &Byte, 1) == 1 ? 0 : 1);
  }
  ::close(Ready[1]);
  ::close(Result[1]);
  int Status = 0;
  ASSERT_EQ(::waitpid(Middle, &Status, 0), Middle);
  EXPECT_TRUE(WIFEXITED(Status) && WEXITSTATUS(Status) == 0);
  pollfd P{Result[0], POLLIN, 0};
  ASSERT_EQ(::poll(&P, 1, 20000), 1) << "the watcher never reported";
  char Seen = -1;
  ASSERT_EQ(::read(Result[0], &Seen, 1), 1);
  EXPECT_EQ(Seen, 0) << "1: never saw its parent end; 2: saw it too early";
  ::close(Ready[0]);
  ::close(Result[0]);
}

} // namespace
