// Inputs the env fuzzer found: strtoull skips leading blanks and takes a sign, so " -1" once
// parsed as 2^64 - 1 bytes (HOOP_CHUNK_SIZE=" -1" asked for 16 EiB chunks). And
// HOOP_SOCKET_BUFFER, once read as a plain int: "4M" was refused, "-1" quietly meant the kernel's
// autotuning and "5000000000" wrapped to another size.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "base/env.h"
#include "base/error.h"
#include "config_outcome.h"
#include "core/config.h"

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

// Config::fromEnvironment with HOOP_SOCKET_BUFFER=`text`: the buffer size, or the error's text.
std::string socketBufferFor(const char* text) {
  return test::configOutcome("HOOP_SOCKET_BUFFER", text, [](const Config& config) {
    return std::to_string(config.socketBufferBytes);
  });
}

TEST(ByteSizeGrammar, SocketBufferTakesSizesAndRefusesWhatAnIntCannotHold) {
  EXPECT_EQ(socketBufferFor("1M"), std::to_string(1 << 20));
  EXPECT_EQ(socketBufferFor("262144"), "262144");
  EXPECT_EQ(socketBufferFor("0"), "0");
  EXPECT_EQ(socketBufferFor("1G"), std::to_string(1 << 30));
  for (const char* bad : {"-1", " 4M", "lots"}) {
    const std::string outcome = socketBufferFor(bad);
    EXPECT_NE(outcome.find(std::string("HOOP_SOCKET_BUFFER='") + bad + "'"), std::string::npos)
        << bad << ": " << outcome;
  }
  for (const char* tooBig : {"5000000000", "2G"}) {
    EXPECT_NE(socketBufferFor(tooBig).find("HOOP_SOCKET_BUFFER must be at most 1G"),
              std::string::npos)
        << tooBig;
  }
}

}  // namespace
}  // namespace hoop
