// hooprun: starts the ranks of a hoop job on this machine or over ssh, relays their output and
// stops them together. See `hooprun --help` and process_group.h.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "hooprun/job_plan.h"
#include "hooprun/launch_context.h"
#include "hooprun/options.h"
#include "hooprun/process_group.h"
#include "hooprun/signal_watch.h"
#include "hooprun/usage_error.h"

namespace {

std::optional<std::string> lookupEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hoop::run;
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    CommandLine command_line = parseCommandLine(args, lookupEnv);
    switch (command_line.action) {
      case Action::kHelp: std::fputs(usageText().c_str(), stdout); return 0;
      case Action::kVersion: std::printf("hooprun (hoop) %s\n", HOOPRUN_VERSION); return 0;
      case Action::kRun: break;
    }
    const Options& options = command_line.options;
    JobPlan plan = planJob(options, currentLaunchContext(runsOnThisHostOnly(options)));
    // Before the first child exists, so that no SIGCHLD or Ctrl-C can slip by unwatched.
    SignalWatch signals;
    ProcessGroup group(plan, signals);
    return group.run();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "hooprun: %s\nTry 'hooprun --help' for more information.\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    // Something failed inside hooprun itself (pipe, poll, getrandom...); any ranks already
    // started were killed when the ProcessGroup went out of scope.
    std::fprintf(stderr, "hooprun: %s\n", e.what());
    return 1;
  }
}
