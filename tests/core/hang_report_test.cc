// The hang report's pieces without processes: rank ranges, the one-screen summary for any job
// size, the status answer's wire format under hostile bytes, and the hello's purpose field.
#include "core/hang_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "base/error.h"
#include "core/rank_status.h"
#include "transport/tcp/hello.h"

namespace hoop {
namespace {

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string peerName(int r) {
  return "rank " + std::to_string(r) + " (host h" + std::to_string(r / 8) + ", pid " +
         std::to_string(1000 + r) + ")";
}

RankStatus waitingIn(int rank, uint32_t seq, const std::string& waitingFor = "") {
  RankStatus s;
  s.rank = static_cast<uint32_t>(rank);
  s.current = {OpKind::kAllReduce, seq, 16777216, DataType::kFloat32};
  s.lastCompleted = {OpKind::kAllReduce, seq - 1, 16777216, DataType::kFloat32};
  s.waitingFor = waitingFor;
  return s;
}

HangReportInput jobOf(int n) {
  HangReportInput input;
  input.reporter = 0;
  input.timeout = std::chrono::seconds(2);
  for (int r = 0; r < n; ++r) input.peers.push_back(peerName(r));
  input.statuses.resize(static_cast<size_t>(n));
  return input;
}

TEST(RankRanges, CompressesRunsAndCutsLongLists) {
  EXPECT_EQ(formatRankRanges({}), "");
  EXPECT_EQ(formatRankRanges({5}), "5");
  EXPECT_EQ(formatRankRanges({0, 1, 2, 3, 4, 5, 6}), "0-6");
  EXPECT_EQ(formatRankRanges({0, 1, 3, 5, 6, 7, 9}), "0-1,3,5-7,9");
  std::vector<int> evens;
  for (int r = 0; r < 512; r += 2) evens.push_back(r);
  const std::string text = formatRankRanges(evens, 40);
  EXPECT_LE(text.size(), 40u + 20u) << text;
  EXPECT_EQ(text.rfind("0,2,4,", 0), 0u) << text;
  EXPECT_NE(text.find(",... (256 ranks)"), std::string::npos) << text;
}

// The example: seven ranks wait in allreduce #1532, rank 7 never answers.
TEST(HangReport, NamesTheRankThatDidNotAnswer) {
  HangReportInput input = jobOf(8);
  for (int r = 0; r < 7; ++r) {
    input.statuses[r] = waitingIn(r, 1532, r == 6 ? "data from " + peerName(7) : "");
  }
  const std::string report = formatHangReport(input);
  const auto lines = linesOf(report);
  ASSERT_EQ(lines.size(), 4u) << report;
  EXPECT_EQ(lines[0], "hoop hang report from rank 0 (8 ranks, 7 answered, HOOP_TIMEOUT 2 s):");
  EXPECT_EQ(lines[1],
            "  allreduce #1532 (16777216 x float): ranks 0-6 waiting; last completed allreduce "
            "#1531 (16777216 x float)");
  EXPECT_EQ(lines[2],
            "  rank 7 (host h0, pid 1007): no answer (stopped, busy outside hoop, or unreachable); "
            "last completed allreduce #1531 (16777216 x float) as far as the others know");
  EXPECT_EQ(lines[3], "  rank 6 waits for data from rank 7 (host h0, pid 1007)");
}

TEST(HangReport, GroupsRanksByWhereTheyAre) {
  HangReportInput input = jobOf(4);
  input.statuses[0] = waitingIn(0, 9);
  input.statuses[1] = waitingIn(1, 8);
  input.statuses[2] = waitingIn(2, 9);
  input.statuses[3] = waitingIn(3, 8);
  const auto lines = linesOf(formatHangReport(input));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find("allreduce #9 (16777216 x float): ranks 0,2 waiting"), std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("allreduce #8 (16777216 x float): ranks 1,3 waiting"), std::string::npos)
      << lines[2];
}

// 512 ranks in three states, and the worst case of every rank in a state of its own: one
// screen either way, and every rank still accounted for.
TEST(HangReport, StaysOneScreenForManyRanks) {
  HangReportInput input = jobOf(512);
  for (int r = 0; r < 200; ++r) input.statuses[r] = waitingIn(r, 10, "data from somewhere");
  for (int r = 200; r < 400; ++r) input.statuses[r] = waitingIn(r, 9);
  std::string report = formatHangReport(input);
  auto lines = linesOf(report);
  EXPECT_LE(lines.size(), kMaxHangReportLines) << report;
  for (const auto& line : lines) EXPECT_LE(line.size(), 240u) << line;
  EXPECT_NE(report.find("ranks 0-199 waiting"), std::string::npos) << report;
  EXPECT_NE(report.find("ranks 200-399 waiting"), std::string::npos) << report;
  EXPECT_NE(report.find("rank 400 (host h50, pid 1400): no answer"), std::string::npos) << report;
  EXPECT_NE(report.find("109 more ranks did not answer: ranks 403-511"), std::string::npos)
      << report;
  // The oldest operation every answering rank completed is what is known of the silent ones.
  EXPECT_NE(report.find("last completed allreduce #8 (16777216 x float) as far as"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("waits for"), std::string::npos) << "per-rank waits in a large job";

  HangReportInput scattered = jobOf(512);
  for (int r = 0; r < 512; r += 2) {
    scattered.statuses[r] = waitingIn(r, static_cast<uint32_t>(100 + r));
  }
  report = formatHangReport(scattered);
  lines = linesOf(report);
  EXPECT_LE(lines.size(), kMaxHangReportLines) << report;
  for (const auto& line : lines) EXPECT_LE(line.size(), 240u) << line;
  EXPECT_NE(report.find("249 more states: ranks 14,16,18"), std::string::npos) << report;
}

TEST(HangReport, NothingKnownWhenNobodyElseAnswered) {
  HangReportInput input = jobOf(2);
  input.statuses[0] = waitingIn(0, 3);
  input.statuses[0]->lastCompleted = {};  // only initialisation so far
  const auto lines = linesOf(formatHangReport(input));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find("last completed initialisation"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("last completed initialisation as far as the others know"),
            std::string::npos)
      << lines[2];
}

TEST(RankStatusWire, RoundTrips) {
  RankStatus s = waitingIn(3, 77, "data from rank 2 (host a, pid 9)");
  s.state = RankStatus::State::kTimedOut;
  const RankStatus back = decodeRankStatus(encodeRankStatus(s, 42), 3, 42);
  EXPECT_EQ(back.rank, 3u);
  EXPECT_EQ(back.state, RankStatus::State::kTimedOut);
  EXPECT_EQ(back.current, s.current);
  EXPECT_EQ(back.lastCompleted, s.lastCompleted);
  EXPECT_EQ(back.waitingFor, s.waitingFor);
}

TEST(RankStatusWire, RefusesEveryMalformedField) {
  const std::vector<uint8_t> good = encodeRankStatus(waitingIn(3, 77, "abc"), 42);
  auto refused = [&](std::vector<uint8_t> bytes, uint32_t rank = 3, uint64_t tag = 42) {
    try {
      decodeRankStatus(bytes, rank, tag);
    } catch (const Error& e) {
      return e.code() == hoopRemoteError;
    }
    return false;
  };
  EXPECT_FALSE(refused(good));
  EXPECT_TRUE(refused(good, 4)) << "answer from another rank";
  EXPECT_TRUE(refused(good, 3, 43)) << "answer from another job";
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_TRUE(refused(std::vector<uint8_t>(good.begin(), good.begin() + cut))) << cut;
  }
  auto with = [&](size_t offset, uint8_t value) {
    auto bytes = good;
    bytes[offset] = value;
    return bytes;
  };
  EXPECT_TRUE(refused(with(0, 0))) << "magic";
  EXPECT_TRUE(refused(with(4, 9))) << "version";
  EXPECT_TRUE(refused(with(6, 2))) << "state";
  EXPECT_TRUE(refused(with(20, 0))) << "operation kind";
  constexpr auto kFirstUnknownKind = static_cast<uint8_t>(hoop::OpKind::kSetAlgorithms) + 1;
  EXPECT_TRUE(refused(with(20, kFirstUnknownKind))) << "operation kind";
  EXPECT_FALSE(refused(with(20, kFirstUnknownKind - 1))) << "the last kind is known";
  EXPECT_TRUE(refused(with(21, 10))) << "data type";
  EXPECT_TRUE(refused(with(36, 77))) << "last operation kind";
  EXPECT_TRUE(refused(with(good.size() - 5, 200))) << "text length";
  auto longer = good;
  longer.push_back('x');
  EXPECT_TRUE(refused(longer)) << "trailing bytes";
  // Control characters in the text cannot reach a terminal.
  auto bell = with(good.size() - 1, 7);
  EXPECT_EQ(decodeRankStatus(bell, 3, 42).waitingFor, "ab?");
}

TEST(TcpHelloPurpose, RoundTripsAndRefusesUnknownPurposes) {
  TcpHello hello;
  hello.purpose = HelloPurpose::kStatusQuery;
  hello.streams = 1;
  hello.fromRank = 2;
  hello.toRank = 5;
  auto bytes = encodeTcpHello(hello);
  EXPECT_EQ(decodeTcpHello(bytes).purpose, HelloPurpose::kStatusQuery);
  bytes[10] = 7;
  EXPECT_THROW(decodeTcpHello(bytes), Error);
  bytes[10] = 0;
  EXPECT_EQ(decodeTcpHello(bytes).purpose, HelloPurpose::kData) << "a zero is a data stream";
}

}  // namespace
}  // namespace hoop
