#include "train/announcement.h"

#include <gtest/gtest.h>

#include "hoop/hoop.hpp"

namespace hoop::train {
namespace {

std::vector<Announcement> sample() {
  return {{"layer1.weight", {RequestKind::kAllReduce, hoopFloat16, hoopAvg, 0, 1u << 20, 0.5, 2}},
          {"", {RequestKind::kBroadcast, hoopInt64, hoopSum, 3, 7, 1, 1}},
          {"ag", {RequestKind::kAllGather, hoopBfloat16, hoopSum, 0, 0, 1, 1}}};
}

TEST(Announcement, RoundTripsWithAndWithoutPadding) {
  std::vector<uint8_t> bytes = encodeAnnouncements(sample());
  EXPECT_EQ(decodeAnnouncements(bytes), sample());
  bytes.resize(bytes.size() + 13, 0);
  EXPECT_EQ(decodeAnnouncements(bytes), sample());
}

TEST(Announcement, NothingEncodesToNothing) {
  EXPECT_TRUE(encodeAnnouncements({}).empty());
  EXPECT_TRUE(decodeAnnouncements(std::vector<uint8_t>(9, 0)).empty());
}

TEST(Announcement, EveryTruncationIsRejected) {
  const std::vector<uint8_t> bytes = encodeAnnouncements(sample());
  for (size_t length = 1; length < bytes.size(); ++length) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
    bool threw = false;
    try {
      decodeAnnouncements(cut);
    } catch (const Exception& e) {
      threw = true;
      EXPECT_EQ(e.code(), hoopInternalError);
    }
    EXPECT_TRUE(threw) << "length " << length;
  }
}

TEST(Announcement, UnknownVersionKindTypeOpAndStrayBytesAreRejected) {
  std::vector<uint8_t> bytes = encodeAnnouncements(sample());
  auto rejects = [](std::vector<uint8_t> b) {
    try {
      decodeAnnouncements(b);
    } catch (const Exception&) {
      return true;
    }
    return false;
  };
  std::vector<uint8_t> version = bytes;
  version[0] = 9;
  EXPECT_TRUE(rejects(version));
  std::vector<uint8_t> kind = bytes;
  kind[1 + 4 + 4 + 13] = 200;  // version, count, length, "layer1.weight", then the kind
  EXPECT_TRUE(rejects(kind));
  std::vector<uint8_t> type = bytes;
  type[1 + 4 + 4 + 13 + 1] = hoopNumTypes;
  EXPECT_TRUE(rejects(type));
  std::vector<uint8_t> op = bytes;
  op[1 + 4 + 4 + 13 + 2] = hoopNumOps;
  EXPECT_TRUE(rejects(op));
  op[1 + 4 + 4 + 13 + 2] = hoopNumOps - 1;  // the last operation is still a known one
  EXPECT_EQ(decodeAnnouncements(op)[0].shape.op, hoopNumOps - 1);
  std::vector<uint8_t> stray = bytes;
  stray.push_back(0);
  stray.push_back(7);
  EXPECT_TRUE(rejects(stray));
}

}  // namespace
}  // namespace hoop::train
