// HOOP_DEBUG=ERROR|WARN|INFO|TRACE (WARN, the default, includes ERROR),
// HOOP_DEBUG_SUBSYS=INIT,NET,COLL,... (a leading ^ excludes),
// HOOP_DEBUG_FILE=path with %h (host) and %p (pid). Each line: "host:pid:rank LEVEL SUBSYS msg".
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"

namespace hoop {

enum class LogLevel : int { kNone = 0, kError = 1, kWarn = 2, kInfo = 3, kTrace = 4 };

enum class LogSubsys : uint32_t {
  kInit = 1u << 0,
  kNet = 1u << 1,
  kColl = 1u << 2,
  kP2p = 1u << 3,
  kBootstrap = 1u << 4,
  kTune = 1u << 5,
  kEnv = 1u << 6,
};

bool logEnabled(LogLevel level, LogSubsys subsys);
// rank < 0 prints "-": a message from before a communicator exists.
void logLine(LogLevel level, LogSubsys subsys, int rank, const std::string& message);

template <typename... Args>
void log(LogLevel level, LogSubsys subsys, int rank, Args&&... args) {
  if (logEnabled(level, subsys)) logLine(level, subsys, rank, str(std::forward<Args>(args)...));
}

// This machine's hostname, for messages.
const std::string& localHostName();

}  // namespace hoop
