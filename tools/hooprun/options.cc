#include "hooprun/options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

#include "hooprun/usage_error.h"

namespace hoop::run {
namespace {

// Far above any real job; catches "-np 1000000000" before it forks the machine to death.
constexpr size_t kMaxRanks = 1 << 20;
// About 115 days: long enough for any job, short enough that milliseconds cannot overflow.
constexpr double kMaxTimeoutSeconds = 1e7;

constexpr const char* kLauncherVariables[] = {
    "HOOP_RANK",      "HOOP_SIZE",   "HOOP_LOCAL_RANK", "HOOP_LOCAL_SIZE",
    "HOOP_ROOT_ADDR", "HOOP_SECRET", "HOOP_LAUNCHER",
};

bool isValidVariableName(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

size_t parseRankCount(const std::string& option, const std::string& text) {
  size_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > kMaxRanks) {
    throw UsageError(option + " '" + text + "': the number of ranks must be an integer from 1 to " +
                     std::to_string(kMaxRanks));
  }
  return value;
}

std::chrono::milliseconds parseTimeout(const std::string& text) {
  double seconds = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(seconds) ||
      seconds <= 0 || seconds > kMaxTimeoutSeconds) {
    throw UsageError("--timeout '" + text + "': give a number of seconds greater than 0");
  }
  // Round up so that a tiny positive timeout never becomes "no time at all".
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
}

EnvVar parseExport(const std::string& text, const EnvLookup& lookup) {
  size_t eq = text.find('=');
  std::string name = text.substr(0, eq);
  if (!isValidVariableName(name)) {
    throw UsageError("-x '" + text + "': '" + name + "' is not a variable name");
  }
  if (isLauncherVariable(name)) {
    throw UsageError("-x '" + text + "': hooprun sets " + name + " itself");
  }
  if (eq != std::string::npos) return EnvVar{name, text.substr(eq + 1)};
  std::optional<std::string> value = lookup(name);
  if (!value) {
    // Refusing is kinder than exporting nothing: a silently missing variable would make ranks on
    // different hosts disagree in ways that are hard to trace.
    throw UsageError("-x " + name + ": " + name + " is not set in hooprun's environment (use -x " +
                     name + "=VALUE)");
  }
  return EnvVar{name, *value};
}

}  // namespace

bool isLauncherVariable(const std::string& name) {
  return std::any_of(std::begin(kLauncherVariables), std::end(kLauncherVariables),
                     [&](const char* v) { return name == v; });
}

std::string formatSeconds(std::chrono::milliseconds duration) {
  long long ms = duration.count();
  std::string text = std::to_string(ms / 1000);
  if (long long frac = ms % 1000; frac != 0) {
    std::string digits = std::to_string(1000 + frac).substr(1);  // zero-padded to 3 digits
    digits.erase(digits.find_last_not_of('0') + 1);
    text += "." + digits;
  }
  return text + " s";
}

CommandLine parseCommandLine(const std::vector<std::string>& args, const EnvLookup& lookup) {
  CommandLine result;
  Options& options = result.options;
  std::optional<size_t> num_ranks;
  bool have_host_list = false;
  bool have_hostfile = false;

  size_t i = 0;
  while (i < args.size()) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the program ("-" alone is a program name too)

    // Long options also take "--name=value".
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0) {
      if (size_t eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        inline_value = arg.substr(eq + 1);
      }
    }
    ++i;
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i >= args.size()) throw UsageError("option " + name + " needs a value");
      return args[i++];
    };
    auto no_value = [&] {
      if (inline_value) throw UsageError("option " + name + " takes no value");
    };

    if (name == "-h" || name == "--help") {
      no_value();
      result.action = Action::kHelp;
      return result;
    } else if (name == "--version") {
      no_value();
      result.action = Action::kVersion;
      return result;
    } else if (name == "-np" || name == "-n" || name == "--np") {
      num_ranks = parseRankCount(name, value());
    } else if (name == "-H" || name == "--host") {
      for (const HostSlots& h : parseHostList(value())) addHost(options.hosts, h.name, h.slots);
      have_host_list = true;
    } else if (name == "--hostfile") {
      for (const HostSlots& h : readHostfile(value())) addHost(options.hosts, h.name, h.slots);
      have_hostfile = true;
    } else if (name == "-x") {
      options.exports.push_back(parseExport(value(), lookup));
    } else if (name == "--timeout") {
      options.timeout = parseTimeout(value());
    } else if (name == "--bind-to") {
      options.bind_to = parseBinding(value());
    } else {
      throw UsageError("unknown option '" + arg + "'");
    }
  }

  if (have_host_list && have_hostfile) {
    throw UsageError("give either -H or --hostfile, not both");
  }
  options.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (options.program.empty()) throw UsageError("no program to run");

  if (num_ranks) {
    options.num_ranks = *num_ranks;
  } else if (!options.hosts.empty()) {
    // As mpirun does: without -np, use every slot the host list offers.
    for (const HostSlots& h : options.hosts) options.num_ranks += h.slots;
  } else {
    throw UsageError("missing -np N (the number of ranks)");
  }
  // Reject a host list that is too small now, with the rest of the usage errors.
  if (!options.hosts.empty()) placeRanks(options.hosts, options.num_ranks);
  return result;
}

std::string usageText() {
  return R"(Usage: hooprun -np N [options] [--] prog [args...]

Starts N ranks of 'prog args...' as one hoop job and prints their output, each line
prefixed with "[rank] " (stdout to stdout, stderr to stderr).

Options:
  -np, -n, --np N          number of ranks (with -H or --hostfile: defaults to all slots)
  -H, --host LIST          hosts and their slots, e.g. a:2,b:2 (a host without :N has 1)
      --hostfile FILE      one host per line, 'host slots=N' or 'host:N'; '#' comments
  -x VAR[=VALUE]           export VAR to every rank (VAR alone copies hooprun's value)
      --timeout SECONDS    stop the job after SECONDS (may be fractional), exit 124
      --bind-to core|none  core: run each rank of this machine on one core of its own
                           (local rank r on core r mod the cores hooprun may use; more
                           ranks than cores share them in turn); none (default): leave
                           placement to the kernel. Ranks on other hosts are not bound.
  -h, --help               show this help and exit
      --version            show the version and exit

Ranks are placed in order, filling each host's slots. Without -H/--hostfile, or when
every host is localhost/127.0.0.1, all ranks run here. Ranks on other hosts start with
'ssh -o BatchMode=yes HOST ...'; set HOOP_RSH to use another command.

Every rank gets hooprun's environment (remote ranks: only the variables below and -x)
plus HOOP_RANK, HOOP_SIZE, HOOP_LOCAL_RANK, HOOP_LOCAL_SIZE, HOOP_ROOT_ADDR (host:port
where rank 0 listens), HOOP_SECRET (the job's 128-bit secret as 32 hex digits) and
HOOP_LAUNCHER=hooprun. Standard input of every rank is empty.

SIGINT, SIGTERM and SIGHUP are forwarded to all ranks (a second one kills them at once);
ranks still running 3 seconds later are killed. When a rank fails or exits on a signal,
hooprun names it and stops the others the same way (SIGTERM, then SIGKILL).

Exit status: 0 when every rank exits 0; otherwise the first failing rank's status
(128+N for a rank killed by signal N), 124 after --timeout, 128+N when hooprun itself
receives signal N, 126/127 when prog cannot be executed/found, 2 for usage errors,
1 when hooprun itself fails (for example it cannot create a pipe).
)";
}

}  // namespace hoop::run
