// Inputs the env fuzzer found: strtoull skips leading blanks and takes a sign, so " -1" once
// parsed as 2^64 - 1 bytes (HOOP_CHUNK_SIZE=" -1" asked for 16 EiB chunks).
#include <gtest/gtest.h>

#include "core/env.h"

namespace hoop {
namespace {

TEST(ByteSizeGrammar, RejectsBlanksAndSignsBeforeTheDigits) {
  EXPECT_FALSE(parseByteSize(" -1").has_value());
  EXPECT_FALSE(parseByteSize("\t55").has_value());
  EXPECT_FALSE(parseByteSize("+5").has_value());
  EXPECT_FALSE(parseByteSize(" 4M").has_value());
  EXPECT_EQ(parseByteSize("4M"), size_t{4} << 20);
  EXPECT_EQ(parseByteSize("0"), size_t{0});
}

}  // namespace
}  // namespace hoop
