#include "core/user_config.h"

#include <string>

#include "base/error.h"

namespace hoop {

namespace {

constexpr const char* kCall = "hoopCommInitRankConfig";

// A timeout field: unset keeps what the environment gave, 0 is "no limit" as in the environment.
void applySeconds(int seconds, const char* field, std::chrono::milliseconds& target) {
  if (seconds == HOOP_CONFIG_UNDEF_INT) return;
  if (seconds < 0) {
    fail(hoopInvalidArgument, kCall, ": config.", field, " = ", seconds,
         " is negative (whole seconds; 0 means no limit; HOOP_CONFIG_UNDEF_INT takes the "
         "environment's)");
  }
  // "No limit" is the week the environment's 0 also means.
  target = seconds == 0 ? std::chrono::hours(24 * 7) : std::chrono::seconds(seconds);
}

void checkHeader(const hoopConfig_t& user) {
  if (user.size != sizeof(hoopConfig_t) || user.magic != HOOP_CONFIG_MAGIC) {
    fail(hoopInvalidArgument, kCall, ": config is not an initialised hoopConfig_t (size ",
         user.size, ", magic 0x", std::hex, user.magic, std::dec,
         "); declare it as hoopConfig_t config = HOOP_CONFIG_INITIALIZER; and then set fields");
  }
  if (user.version == 0 || user.version > HOOP_VERSION_CODE) {
    fail(hoopInvalidArgument, kCall, ": config.version ", user.version,
         " is not a hoop version up to this library's ", HOOP_VERSION_CODE,
         " (start from HOOP_CONFIG_INITIALIZER)");
  }
}

}  // namespace

CommSettings resolveSettings(const hoopConfig_t* user) {
  CommSettings settings;
  if (user == nullptr) {
    settings.config = Config::fromEnvironment();
    return settings;
  }
  checkHeader(*user);
  // Every field is checked before the environment is read, so a wrong field is named even when
  // the environment has a problem of its own.
  if (user->blocking != HOOP_CONFIG_UNDEF_INT && user->blocking != 0 && user->blocking != 1) {
    fail(hoopInvalidArgument, kCall, ": config.blocking = ", user->blocking, " is not 0 or 1");
  }
  if (user->socketStreams != HOOP_CONFIG_UNDEF_INT &&
      (user->socketStreams < 1 || user->socketStreams > 64)) {
    fail(hoopInvalidArgument, kCall, ": config.socketStreams = ", user->socketStreams,
         " is not in 1..64");
  }
  std::chrono::milliseconds checkedOnly{};
  applySeconds(user->initTimeoutSeconds, "initTimeoutSeconds", checkedOnly);
  applySeconds(user->timeoutSeconds, "timeoutSeconds", checkedOnly);
  AlgoOverrides algorithms;
  if (user->algorithms != nullptr) {
    try {
      algorithms = AlgoOverrides::parse(user->algorithms);
    } catch (const Error& e) {
      fail(e.code(), kCall, ": config.algorithms: ", e.what());
    }
  }

  settings.config = Config::fromEnvironment();
  settings.blocking = user->blocking != 0;  // unset (INT_MIN) is the default, blocking
  applySeconds(user->initTimeoutSeconds, "initTimeoutSeconds", settings.config.initTimeout);
  applySeconds(user->timeoutSeconds, "timeoutSeconds", settings.config.opTimeout);
  if (user->socketStreams != HOOP_CONFIG_UNDEF_INT) {
    settings.config.socketStreams = user->socketStreams;
  }
  if (user->algorithms != nullptr) settings.config.algorithms = std::move(algorithms);
  return settings;
}

}  // namespace hoop
