#include <gtest/gtest.h>
#include <stdlib.h>

#include "hoop/train.hpp"

namespace hoop::train {
namespace {

// Sets a variable for one test and restores the previous state afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) {
      unsetenv(name_);
    } else {
      setenv(name_, old_.c_str(), 1);
    }
  }

 private:
  const char* name_;
  std::string old_;
};

TEST(EngineOptions, DefaultsMatchHorovods) {
  const EngineOptions options;
  EXPECT_EQ(options.fusionThresholdBytes, size_t{128} << 20);
  EXPECT_EQ(options.cycleTimeMs, 1.0);
  EXPECT_EQ(options.stallTimeoutSeconds, 60.0);
  EXPECT_EQ(options.cacheCapacity, 1024u);
}

TEST(EngineOptions, EnvironmentOverridesEachField) {
  ScopedEnv fusion("HOOP_FUSION_THRESHOLD", "4096");
  ScopedEnv cycle("HOOP_CYCLE_TIME", "2.5");
  ScopedEnv stall("HOOP_STALL_CHECK_TIME", "0");
  ScopedEnv cache("HOOP_CACHE_CAPACITY", "7");
  const EngineOptions options = EngineOptions::fromEnvironment();
  EXPECT_EQ(options.fusionThresholdBytes, 4096u);
  EXPECT_EQ(options.cycleTimeMs, 2.5);
  EXPECT_EQ(options.stallTimeoutSeconds, 0.0);
  EXPECT_EQ(options.cacheCapacity, 7u);
}

TEST(EngineOptions, MalformedValueIsAnErrorNamingTheVariable) {
  for (const char* bad : {"12MB", "-1", "fast", "nan"}) {
    ScopedEnv cycle("HOOP_CYCLE_TIME", bad);
    try {
      EngineOptions::fromEnvironment();
      ADD_FAILURE() << "accepted HOOP_CYCLE_TIME=" << bad;
    } catch (const Exception& e) {
      EXPECT_EQ(e.code(), hoopInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("HOOP_CYCLE_TIME"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hoop::train
