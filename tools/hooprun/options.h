// The hooprun command line: what to run, how many ranks, where, and what to export.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hooprun/cpu_binding.h"
#include "hooprun/env_var.h"
#include "hooprun/hosts.h"

namespace hoop::run {

struct Options {
  size_t num_ranks = 0;
  std::vector<HostSlots> hosts;  // empty: every rank runs on this machine
  // -x VAR[=value] in command-line order, values resolved (-x VAR copies hooprun's value).
  std::vector<EnvVar> exports;
  std::optional<std::chrono::milliseconds> timeout;
  Binding bind_to = Binding::kNone;  // --bind-to: applies to the ranks started on this machine
  std::vector<std::string> program;  // prog followed by its arguments, never empty for kRun
};

enum class Action { kRun, kHelp, kVersion };

struct CommandLine {
  Action action = Action::kRun;
  Options options;
};

// Looks up a variable in hooprun's environment (getenv in production, a map in tests).
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Parses the arguments after argv[0]. Options end at the first argument that is not an option
// (the program) or after "--". Throws UsageError with a message fit for "hooprun: <message>".
// Reads the hostfile named by --hostfile.
CommandLine parseCommandLine(const std::vector<std::string>& args, const EnvLookup& lookup);

// The variables hooprun sets itself; -x may not override them (and HOOP_SECRET must never
// travel on a command line, which is what -x does for remote ranks).
bool isLauncherVariable(const std::string& name);

// "5 s", "0.25 s": a duration as the user would have typed it for --timeout.
std::string formatSeconds(std::chrono::milliseconds duration);

std::string usageText();

}  // namespace hoop::run
