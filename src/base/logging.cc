#include "base/logging.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

namespace hoop {
namespace {

struct SubsysName {
  const char* name;
  LogSubsys subsys;
};
constexpr SubsysName kSubsysNames[] = {
    {"INIT", LogSubsys::kInit},
    {"NET", LogSubsys::kNet},
    {"COLL", LogSubsys::kColl},
    {"P2P", LogSubsys::kP2p},
    {"BOOTSTRAP", LogSubsys::kBootstrap},
    {"TUNE", LogSubsys::kTune},
    {"ENV", LogSubsys::kEnv},
};

const char* subsysName(LogSubsys subsys) {
  for (const auto& entry : kSubsysNames) {
    if (entry.subsys == subsys) return entry.name;
  }
  return "?";
}

// The logger is one of the two pieces of process-wide state DESIGN.md allows; it is configured
// once from the environment and then only read (the FILE* has its own lock).
class Logger {
 public:
  Logger() {
    const char* level = std::getenv("HOOP_DEBUG");
    if (level != nullptr) {
      if (strcasecmp(level, "ERROR") == 0)
        level_ = LogLevel::kError;
      else if (strcasecmp(level, "WARN") == 0)
        level_ = LogLevel::kWarn;
      else if (strcasecmp(level, "INFO") == 0)
        level_ = LogLevel::kInfo;
      else if (strcasecmp(level, "TRACE") == 0)
        level_ = LogLevel::kTrace;
      else if (strcasecmp(level, "NONE") == 0)
        level_ = LogLevel::kNone;
    }
    parseSubsystems(std::getenv("HOOP_DEBUG_SUBSYS"));
    openFile(std::getenv("HOOP_DEBUG_FILE"));
  }
  ~Logger() {
    if (file_ != stderr) std::fclose(file_);
  }

  bool enabled(LogLevel level, LogSubsys subsys) const {
    return static_cast<int>(level) <= static_cast<int>(level_) &&
           (mask_ & static_cast<uint32_t>(subsys)) != 0;
  }

  void write(LogLevel level, LogSubsys subsys, int rank, const std::string& message) {
    static constexpr const char* kLevelNames[] = {"NONE", "ERROR", "WARN", "INFO", "TRACE"};
    std::ostringstream line;
    line << localHostName() << ':' << getpid() << ':';
    if (rank >= 0)
      line << rank;
    else
      line << '-';
    line << " hoop " << kLevelNames[static_cast<int>(level)] << ' ' << subsysName(subsys) << ' '
         << message << '\n';
    std::string text = line.str();
    std::fwrite(text.data(), 1, text.size(), file_);
    std::fflush(file_);
  }

 private:
  void parseSubsystems(const char* spec) {
    if (spec == nullptr || spec[0] == '\0') return;
    bool exclude = spec[0] == '^';
    uint32_t named = 0;
    std::string list(exclude ? spec + 1 : spec);
    std::stringstream tokens(list);
    std::string token;
    while (std::getline(tokens, token, ',')) {
      if (strcasecmp(token.c_str(), "ALL") == 0) named = ~0u;
      for (const auto& entry : kSubsysNames) {
        if (strcasecmp(token.c_str(), entry.name) == 0)
          named |= static_cast<uint32_t>(entry.subsys);
      }
    }
    mask_ = exclude ? ~named : named;
  }

  void openFile(const char* pattern) {
    if (pattern == nullptr || pattern[0] == '\0') return;
    std::string path;
    for (const char* c = pattern; *c != '\0'; ++c) {
      if (c[0] == '%' && c[1] == 'h') {
        path += localHostName();
        ++c;
      } else if (c[0] == '%' && c[1] == 'p') {
        path += std::to_string(getpid());
        ++c;
      } else {
        path += *c;
      }
    }
    if (FILE* file = std::fopen(path.c_str(), "a")) file_ = file;
  }

  LogLevel level_ = LogLevel::kWarn;
  uint32_t mask_ = ~0u;
  FILE* file_ = stderr;
};

Logger& logger() {
  static Logger instance;
  return instance;
}

}  // namespace

bool logEnabled(LogLevel level, LogSubsys subsys) { return logger().enabled(level, subsys); }

void logLine(LogLevel level, LogSubsys subsys, int rank, const std::string& message) {
  logger().write(level, subsys, rank, message);
}

const std::string& localHostName() {
  static const std::string name = [] {
    if (const char* forced = std::getenv("HOOP_HOSTNAME"); forced != nullptr && forced[0] != 0) {
      return std::string(forced);
    }
    char buffer[256] = {};
    gethostname(buffer, sizeof(buffer) - 1);
    return std::string(buffer);
  }();
  return name;
}

}  // namespace hoop
