#include "core/user_config.h"

#include <string>

#include "base/error.h"

namespace hoop {

namespace {

// A timeout field: unset keeps what the base gave, 0 is "no limit" as in the environment.
void applySeconds(int seconds, const char* call, const char* field,
                  std::chrono::milliseconds& target) {
  if (seconds == HOOP_CONFIG_UNDEF_INT) return;
  if (seconds < 0) {
    fail(hoopInvalidArgument, call, ": config.", field, " = ", seconds,
         " is negative (whole seconds; 0 means no limit; HOOP_CONFIG_UNDEF_INT takes the "
         "environment's)");
  }
  // "No limit" is the week the environment's 0 also means.
  target = seconds == 0 ? std::chrono::hours(24 * 7) : std::chrono::seconds(seconds);
}

void checkHeader(const hoopConfig_t& user, const char* call) {
  if (user.size != sizeof(hoopConfig_t) || user.magic != HOOP_CONFIG_MAGIC) {
    fail(hoopInvalidArgument, call, ": config is not an initialised hoopConfig_t (size ", user.size,
         ", magic 0x", std::hex, user.magic, std::dec,
         "); declare it as hoopConfig_t config = HOOP_CONFIG_INITIALIZER; and then set fields");
  }
  if (user.version == 0 || user.version > HOOP_VERSION_CODE) {
    fail(hoopInvalidArgument, call, ": config.version ", user.version,
         " is not a hoop version up to this library's ", HOOP_VERSION_CODE,
         " (start from HOOP_CONFIG_INITIALIZER)");
  }
}

// Checks every field, so a wrong one is named before anything else is read (the environment may
// have a problem of its own); returns the algorithms it names, read.
AlgoOverrides checkFields(const hoopConfig_t& user, const char* call) {
  checkHeader(user, call);
  if (user.blocking != HOOP_CONFIG_UNDEF_INT && user.blocking != 0 && user.blocking != 1) {
    fail(hoopInvalidArgument, call, ": config.blocking = ", user.blocking, " is not 0 or 1");
  }
  if (user.socketStreams != HOOP_CONFIG_UNDEF_INT &&
      (user.socketStreams < 1 || user.socketStreams > 64)) {
    fail(hoopInvalidArgument, call, ": config.socketStreams = ", user.socketStreams,
         " is not in 1..64");
  }
  std::chrono::milliseconds checkedOnly{};
  applySeconds(user.initTimeoutSeconds, call, "initTimeoutSeconds", checkedOnly);
  applySeconds(user.timeoutSeconds, call, "timeoutSeconds", checkedOnly);
  AlgoOverrides algorithms;
  if (user.algorithms != nullptr) {
    try {
      algorithms = AlgoOverrides::parse(user.algorithms);
    } catch (const Error& e) {
      fail(e.code(), call, ": config.algorithms: ", e.what());
    }
  }
  return algorithms;
}

// The fields `user` sets, over `settings`.
void applyFields(const hoopConfig_t& user, AlgoOverrides algorithms, const char* call,
                 CommSettings& settings) {
  if (user.blocking != HOOP_CONFIG_UNDEF_INT) settings.blocking = user.blocking != 0;
  applySeconds(user.initTimeoutSeconds, call, "initTimeoutSeconds", settings.config.initTimeout);
  applySeconds(user.timeoutSeconds, call, "timeoutSeconds", settings.config.opTimeout);
  if (user.socketStreams != HOOP_CONFIG_UNDEF_INT) {
    settings.config.socketStreams = user.socketStreams;
  }
  if (user.algorithms != nullptr) settings.config.algorithms = std::move(algorithms);
}

}  // namespace

CommSettings resolveSettings(const hoopConfig_t* user) {
  constexpr const char* kCall = "hoopCommInitRankConfig";
  CommSettings settings;
  if (user == nullptr) {
    settings.config = Config::fromEnvironment();
    return settings;
  }
  AlgoOverrides algorithms = checkFields(*user, kCall);
  settings.config = Config::fromEnvironment();
  applyFields(*user, std::move(algorithms), kCall, settings);
  return settings;
}

CommSettings inheritSettings(const CommSettings& base, const hoopConfig_t* user, const char* call) {
  if (user == nullptr) return base;
  AlgoOverrides algorithms = checkFields(*user, call);
  CommSettings settings = base;
  applyFields(*user, std::move(algorithms), call, settings);
  return settings;
}

}  // namespace hoop
