// hoopConfig_t (hoopCommInitRankConfig, hoopCommSplit) read into the settings a communicator runs
// with: a field set in the struct wins over its environment variable (or the parent's setting, for
// a split), which wins over hoop's default.
#pragma once

#include "core/config.h"
#include "hoop/hoop.h"

namespace hoop {

struct CommSettings {
  Config config;
  bool blocking = true;
};

// `user` NULL: the environment alone, blocking. Throws hoopInvalidArgument naming the field
// that is wrong (or saying to start from HOOP_CONFIG_INITIALIZER when the header is not one).
CommSettings resolveSettings(const hoopConfig_t* user);

// `base` with the fields `user` sets (hoopCommSplit: a new communicator inherits its parent's
// settings); `user` NULL: `base` itself. Errors as resolveSettings's, naming `call`.
CommSettings inheritSettings(const CommSettings& base, const hoopConfig_t* user, const char* call);

}  // namespace hoop
