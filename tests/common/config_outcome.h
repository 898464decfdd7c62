// Config::fromEnvironment with one setting given: what the test reads from the Config, or the
// text of the error it raised (which must be hoopInvalidArgument). The setting is unset again
// afterwards.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "base/error.h"
#include "core/config.h"

namespace hoop::test {

template <typename Read>
std::string configOutcome(const char* name, const char* text, Read read) {
  setenv(name, text, 1);
  std::string outcome;
  try {
    outcome = read(Config::fromEnvironment());
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidArgument) << e.what();
    outcome = e.what();
  }
  unsetenv(name);
  return outcome;
}

}  // namespace hoop::test
