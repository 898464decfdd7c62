// The failure notice's wire encoding: a round trip keeps every field, and every malformed field
// (the bytes come from a socket anyone can reach) is refused rather than repaired.
#include "core/failure_notice.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace hoop {
namespace {

constexpr uint64_t kJobTag = 0x0123456789abcdefull;

FailureNotice sample() {
  FailureNotice notice;
  notice.reporter = 2;
  notice.code = hoopInvalidUsage;
  notice.operation = {OpKind::kAllReduce, 57, 1024, DataType::kInt32};
  notice.cause = "rank 1 (host vm, pid 912) exited while rank 2 was waiting for data from it";
  return notice;
}

// Decoding `bytes` throws hoopRemoteError whose message contains `words`.
void expectRefused(const std::vector<uint8_t>& bytes, const std::string& words) {
  try {
    decodeFailureNotice(bytes, 2, kJobTag);
    ADD_FAILURE() << "accepted a notice that should be refused (" << words << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopRemoteError);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(FailureNotice, RoundTripKeepsEveryField) {
  for (hoopResult_t code : {hoopRemoteError, hoopInvalidUsage}) {
    FailureNotice notice = sample();
    notice.code = code;
    const FailureNotice back =
        decodeFailureNotice(encodeFailureNotice(notice, kJobTag), 2, kJobTag);
    EXPECT_EQ(back.reporter, 2u);
    EXPECT_EQ(back.code, code);
    EXPECT_EQ(back.operation, notice.operation);
    EXPECT_EQ(back.cause, notice.cause);
  }
}

TEST(FailureNotice, EveryMalformedFieldIsRefused) {
  const std::vector<uint8_t> good = encodeFailureNotice(sample(), kJobTag);
  // Layout: magic 0-3, version 4-5, code 6-7, job tag 8-15, reporter 16-19, operation 20-35
  // (kind 20, type 21), cause length 36-37, cause 38-.
  auto with = [&](size_t offset, uint8_t value) {
    std::vector<uint8_t> bytes = good;
    bytes[offset] = value;
    return bytes;
  };
  expectRefused(with(0, 0), "not a hoop failure notice");
  expectRefused(with(4, 9), "another hoop failure notice version");
  expectRefused(with(6, static_cast<uint8_t>(hoopSuccess)), "with code 0");
  expectRefused(with(6, static_cast<uint8_t>(hoopTimeout)), "with code 8");
  // A code no hoopResult_t holds is refused as a number (the fuzzer found it converted first).
  std::vector<uint8_t> unknownCode = good;
  unknownCode[6] = 0xff;
  unknownCode[7] = 0xff;
  expectRefused(unknownCode, "with code 65535");
  expectRefused(with(8, 0), "from another job");
  expectRefused(with(16, 3), "signed by rank 3 sent by rank 2");
  expectRefused(with(20, 0), "unknown operation kind 0");
  expectRefused(with(20, 200), "unknown operation kind 200");
  expectRefused(with(21, 99), "unknown data type 99");
  expectRefused(with(36, 0), "cause of");                                   // longer than it says
  expectRefused(with(36, static_cast<uint8_t>(good[36] + 1)), "cause of");  // shorter
  expectRefused(with(38, '\n'), "holds byte 10");
  expectRefused(with(40, 0x80), "holds byte 128");
  expectRefused(std::vector<uint8_t>(good.begin(), good.begin() + 30), "malformed failure notice");
  expectRefused({}, "malformed failure notice");

  std::vector<uint8_t> empty(good.begin(), good.begin() + 38);
  empty[36] = 0;
  empty[37] = 0;
  expectRefused(empty, "cause of 0 bytes");
  FailureNotice huge = sample();
  huge.cause.assign(FailureNotice::kMaxCauseBytes + 1, 'x');
  std::vector<uint8_t> tooLong = encodeFailureNotice(huge, kJobTag);  // the writer cuts it
  EXPECT_EQ(decodeFailureNotice(tooLong, 2, kJobTag).cause.size(), FailureNotice::kMaxCauseBytes);
  tooLong.resize(38);
  tooLong[36] = static_cast<uint8_t>((FailureNotice::kMaxCauseBytes + 1) & 0xff);
  tooLong[37] = static_cast<uint8_t>((FailureNotice::kMaxCauseBytes + 1) >> 8);
  tooLong.insert(tooLong.end(), FailureNotice::kMaxCauseBytes + 1, 'x');
  expectRefused(tooLong, "cause of 1025 bytes");
}

TEST(FailureNotice, CauseIsTheFirstLineWithoutTheReportersPrefix) {
  EXPECT_EQ(noticeCause("rank 2: rank 1 (host a, pid 9) exited\nhoop hang report ...", 2),
            "rank 1 (host a, pid 9) exited");
  EXPECT_EQ(noticeCause("rank 3: something", 2), "rank 3: something");
  EXPECT_EQ(noticeCause("tab\there", 2), "tab?here");
  EXPECT_EQ(noticeCause("", 2), "(no message)");
  EXPECT_EQ(noticeCause(std::string(5000, 'y'), 2).size(), FailureNotice::kMaxCauseBytes);
  EXPECT_TRUE(noticeCarries(hoopRemoteError));
  EXPECT_TRUE(noticeCarries(hoopInvalidUsage));
  EXPECT_FALSE(noticeCarries(hoopTimeout));
  EXPECT_FALSE(noticeCarries(hoopSystemError));
}

}  // namespace
}  // namespace hoop
