// Line relaying and the wording of rank exits.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <string>

#include "hooprun/line_relay.h"
#include "hooprun/status_text.h"

namespace hoop::run {
namespace {

TEST(HooprunLineRelay, PrefixesCompleteLines) {
  LineRelay relay(2);
  EXPECT_EQ(relay.feed("hello\nworld\n"), "[2] hello\n[2] world\n");
  EXPECT_EQ(relay.feed("\n"), "[2] \n") << "an empty line is still a line";
  EXPECT_EQ(relay.finish(), "");
}

TEST(HooprunLineRelay, HoldsAPartialLineUntilItsNewline) {
  LineRelay relay(0);
  EXPECT_EQ(relay.feed("hel"), "");
  EXPECT_EQ(relay.feed("lo"), "");
  EXPECT_EQ(relay.feed(" wor"), "");
  EXPECT_EQ(relay.feed("ld\nnext"), "[0] hello world\n");
  EXPECT_EQ(relay.feed(" part"), "");
  EXPECT_EQ(relay.finish(), "[0] next part\n") << "flushed on exit, with a newline added";
  EXPECT_EQ(relay.finish(), "");
}

TEST(HooprunLineRelay, CutsLinesLongerThanTheLimit) {
  LineRelay relay(1, 4);
  EXPECT_EQ(relay.feed("abcdefghij\n"), "[1] abcd\n[1] efgh\n[1] ij\n");
  EXPECT_EQ(relay.feed("ab"), "");
  EXPECT_EQ(relay.feed("cdef"), "[1] abcd\n");
  EXPECT_EQ(relay.finish(), "[1] ef\n");
}

TEST(HooprunLineRelay, ALineOfExactlyTheLimitIsNotFollowedByAnEmptyOne) {
  LineRelay relay(1, 4);
  EXPECT_EQ(relay.feed("abcd"), "");
  EXPECT_EQ(relay.feed("\nxy\n"), "[1] abcd\n[1] xy\n");
  EXPECT_EQ(relay.feed("wxyz\n"), "[1] wxyz\n");
}

TEST(HooprunLineRelay, BinaryBytesPassUnchanged) {
  LineRelay relay(7);
  std::string bytes("a\0b\r\n", 5);
  EXPECT_EQ(relay.feed(bytes), std::string("[7] a\0b\r\n", 9));
}

TEST(HooprunStatusText, DescribesExitsAndSignals) {
  int exited3 = 3 << 8;  // as waitpid reports exit(3)
  int segv = SIGSEGV;    // as waitpid reports death by SIGSEGV without a core
  int segv_core = SIGSEGV | 0x80;
  EXPECT_TRUE(WIFEXITED(exited3));
  EXPECT_TRUE(WIFSIGNALED(segv));
  EXPECT_EQ(describeWaitStatus(exited3), "exited with status 3");
  EXPECT_EQ(describeWaitStatus(segv), "killed by signal 11 (Segmentation fault)");
  EXPECT_EQ(describeWaitStatus(segv_core), "killed by signal 11 (Segmentation fault)");
  EXPECT_EQ(exitCodeFor(exited3), 3);
  EXPECT_EQ(exitCodeFor(segv), 139);
  EXPECT_EQ(exitCodeFor(SIGKILL), 137);
  EXPECT_TRUE(exitedCleanly(0));
  EXPECT_FALSE(exitedCleanly(exited3));
  EXPECT_FALSE(exitedCleanly(SIGTERM));
}

TEST(HooprunStatusText, NamesAndRankLists) {
  EXPECT_EQ(signalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(signalName(SIGINT), "SIGINT");
  EXPECT_EQ(formatRankList({}), "");
  EXPECT_EQ(formatRankList({4}), "4");
  EXPECT_EQ(formatRankList({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(formatRankList({1, 3}), "1,3");
  EXPECT_EQ(countRanks(1), "1 rank");
  EXPECT_EQ(countRanks(3), "3 ranks");
}

}  // namespace
}  // namespace hoop::run
