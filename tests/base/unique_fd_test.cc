// UniqueFd closes its descriptor exactly once, whoever owns it last; a pipe's ends are the
// descriptors, and fcntl(F_GETFD) failing with EBADF is the proof one was closed.
#include "base/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace hoop {
namespace {

bool isOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

bool isClosed(int fd) {
  errno = 0;
  return fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

struct Pipe {
  Pipe() { EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0); }
  int fds[2] = {-1, -1};
};

TEST(UniqueFd, DestructionCloses) {
  Pipe p;
  {
    UniqueFd read(p.fds[0]);
    UniqueFd write(p.fds[1]);
    EXPECT_TRUE(read.valid());
    EXPECT_TRUE(isOpen(p.fds[0]));
  }
  EXPECT_TRUE(isClosed(p.fds[0]));
  EXPECT_TRUE(isClosed(p.fds[1]));
}

TEST(UniqueFd, EmptyHoldsNothing) {
  UniqueFd none;
  EXPECT_FALSE(none.valid());
  EXPECT_FALSE(static_cast<bool>(none));
  EXPECT_EQ(none.get(), -1);
}

TEST(UniqueFd, MoveHandsOverWithoutClosing) {
  Pipe p;
  UniqueFd write(p.fds[1]);
  {
    UniqueFd first(p.fds[0]);
    UniqueFd second(std::move(first));
    EXPECT_EQ(first.get(),
              -1);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
    EXPECT_EQ(second.get(), p.fds[0]);
    EXPECT_TRUE(isOpen(p.fds[0]));
    UniqueFd third;
    third = std::move(second);
    EXPECT_EQ(second.get(), -1);  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(isOpen(p.fds[0]));
  }
  EXPECT_TRUE(isClosed(p.fds[0]));
}

TEST(UniqueFd, MoveAssignmentClosesWhatWasHeld) {
  Pipe p;
  UniqueFd held(p.fds[0]);
  held = UniqueFd(p.fds[1]);
  EXPECT_TRUE(isClosed(p.fds[0]));
  EXPECT_TRUE(isOpen(p.fds[1]));
}

TEST(UniqueFd, SelfMoveKeepsTheDescriptor) {
  Pipe p;
  UniqueFd write(p.fds[1]);
  UniqueFd read(p.fds[0]);
  UniqueFd& alias = read;
  read = std::move(alias);
  EXPECT_EQ(read.get(), p.fds[0]);
  EXPECT_TRUE(isOpen(p.fds[0]));
}

TEST(UniqueFd, ReleaseGivesUpOwnership) {
  Pipe p;
  UniqueFd write(p.fds[1]);
  int released = -1;
  {
    UniqueFd read(p.fds[0]);
    released = read.release();
    EXPECT_FALSE(read.valid());
  }
  EXPECT_EQ(released, p.fds[0]);
  EXPECT_TRUE(isOpen(released));
  EXPECT_EQ(close(released), 0);
}

TEST(UniqueFd, ResetClosesTheOldAndHoldsTheNew) {
  Pipe p;
  UniqueFd fd(p.fds[0]);
  fd.reset(p.fds[1]);
  EXPECT_TRUE(isClosed(p.fds[0]));
  EXPECT_EQ(fd.get(), p.fds[1]);
  fd.reset();
  EXPECT_TRUE(isClosed(p.fds[1]));
  EXPECT_FALSE(fd.valid());
}

}  // namespace
}  // namespace hoop
