#include "core/config.h"

#include "core/env.h"
#include "core/error.h"

namespace hoop {

Config Config::fromEnvironment() {
  Config config;
  config.initTimeout = envSeconds("HOOP_INIT_TIMEOUT", 300);
  config.opTimeout = envSeconds("HOOP_TIMEOUT", 600);
  config.socketStreams = static_cast<int>(envInt("HOOP_SOCKET_NSTREAMS", config.socketStreams));
  if (config.socketStreams < 1 || config.socketStreams > 64) {
    fail(hoopInvalidArgument, "HOOP_SOCKET_NSTREAMS=", config.socketStreams, " is not in 1..64");
  }
  config.socketBufferBytes =
      static_cast<int>(envInt("HOOP_SOCKET_BUFFER", config.socketBufferBytes));
  if (auto text = envString("HOOP_CHUNK_SIZE")) {
    auto bytes = parseByteSize(*text);
    if (!bytes || *bytes < 64 || *bytes > (1u << 30)) {
      fail(hoopInvalidArgument, "HOOP_CHUNK_SIZE='", *text, "' is not a size in 64..1G");
    }
    config.chunkBytes = *bytes;
  }
  if (auto text = envString("HOOP_DIRECT_MAX_BYTES")) {
    auto bytes = parseByteSize(*text);
    if (!bytes) fail(hoopInvalidArgument, "HOOP_DIRECT_MAX_BYTES='", *text, "' is not a size");
    config.directMaxBytes = *bytes;
  }
  if (auto text = envString("HOOP_ALGO")) {
    if (*text != "ring" && *text != "direct" && *text != "hierarchical") {
      fail(hoopInvalidArgument, "HOOP_ALGO='", *text,
           "': known algorithms are ring, direct, hierarchical");
    }
    config.algorithm = *text;
  }
  config.spinSetByUser = envString("HOOP_SPIN_US").has_value();
  config.spinBeforeSleep = std::chrono::microseconds(envInt("HOOP_SPIN_US", 50));
  return config;
}

}  // namespace hoop
