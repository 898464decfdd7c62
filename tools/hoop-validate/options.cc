// hoop-validate's command line: modes set the sizes and counts, single options override them.
#include "options.h"

#include <cstdlib>

#include "base/env.h"

namespace hoop::validate {

namespace {

double number(const std::string& option, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(value >= 0)) {
    throw UsageError(option + " takes a number, not '" + text + "'");
  }
  return value;
}

int count(const std::string& option, const std::string& text) {
  const double value = number(option, text);
  if (value != static_cast<int>(value) || value < 1 || value > 1e6) {
    throw UsageError(option + " takes a whole number from 1, not '" + text + "'");
  }
  return static_cast<int>(value);
}

}  // namespace

double parseDuration(const std::string& text) {
  if (text.empty()) throw UsageError("--burn-in takes a duration such as 90s, 15m or 2h");
  double scale = 1;
  std::string digits = text;
  switch (text.back()) {
    case 's': digits.pop_back(); break;
    case 'm':
      scale = 60;
      digits.pop_back();
      break;
    case 'h':
      scale = 3600;
      digits.pop_back();
      break;
    default: break;
  }
  const double value = number("--burn-in", digits) * scale;
  if (value <= 0) throw UsageError("--burn-in takes a duration above zero");
  return value;
}

Options parseOptions(const std::vector<std::string>& args) {
  Options options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(arg + " needs a value");
      return args[++i];
    };
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if (arg == "--quick") {
      options.mode = Mode::kQuick;
    } else if (arg == "--burn-in") {
      options.mode = Mode::kBurnIn;
      options.burnInSeconds = parseDuration(value());
    } else if (arg == "--full") {
      options.full = true;
    } else if (arg == "--rounds") {
      options.rounds = count(arg, value());
    } else if (arg == "--repeats") {
      options.repeats = count(arg, value());
    } else if (arg == "--bytes") {
      const std::string& text = value();
      const std::optional<size_t> bytes = parseByteSize(text);
      if (!bytes || *bytes == 0)
        throw UsageError("--bytes takes a size such as 256K, not '" + text + "'");
      options.messageBytes = *bytes;
    } else if (arg == "--seed") {
      options.seed = static_cast<uint64_t>(number(arg, value()));
    } else if (arg == "--slow") {
      options.slowFraction = number(arg, value());
      if (options.slowFraction <= 0 || options.slowFraction >= 1) {
        throw UsageError("--slow takes a fraction between 0 and 1");
      }
    } else if (arg == "--timeout") {
      options.timeoutSeconds = number(arg, value());
    } else if (arg == "--no-collectives") {
      options.collectives = false;
    } else if (arg == "--expect") {
      options.expectFile = value();
    } else if (arg == "--out") {
      options.outDir = value();
    } else {
      throw UsageError("unknown argument '" + arg + "'");
    }
  }
  const bool quick = options.mode == Mode::kQuick;
  if (options.rounds < 0) options.rounds = quick ? 3 : 6;
  if (options.repeats < 0) options.repeats = quick ? 1 : 3;
  if (options.messageBytes == 0)
    options.messageBytes = quick ? (size_t{256} << 10) : (size_t{1} << 20);
  return options;
}

const char* const kUsage =
    "usage: hooprun -np N -H HOSTS hoop-validate [--quick | --burn-in DURATION] [options]\n"
    "\n"
    "Measures every link of the job (within each host: all pairs; across hosts: rounds of\n"
    "random perfect matchings, all pairs of a round at once), checks every byte moved, runs\n"
    "whole-job allreduces (ring and tree), and names the slow or failing link, host or rail.\n"
    "\n"
    "  --quick            one measurement per pair, 3 cross-host rounds, 256 KiB messages\n"
    "  --burn-in DURATION repeat the plans for DURATION (90s, 15m, 2h): stability\n"
    "  --full             every pair of hosts (a round-robin of N-1 rounds) instead of R rounds\n"
    "  --rounds R         cross-host rounds (default 6, quick 3)\n"
    "  --repeats K        measurements of each pair (default 3, quick 1)\n"
    "  --bytes SIZE       each bandwidth message (default 1M, quick 256K)\n"
    "  --expect FILE      expected figures (docs/validate.md); else from the topology\n"
    "  --slow F           a figure below F x its reference is slow (default 0.5)\n"
    "  --seed S           the matchings and the data pattern (default 1)\n"
    "  --timeout SECONDS  HOOP_TIMEOUT when the environment sets none (default 20)\n"
    "  --no-collectives   leave out the whole-job allreduce check\n"
    "  --out DIR          where report.json, measurements.jsonl, heatmap-*.svg go (default .)\n"
    "\n"
    "Exit status: 0 healthy, 1 degraded (slow links or hosts), 2 failed (corrupt data, a dead\n"
    "peer or link, a failed collective), 3 bad command line.\n";

}  // namespace hoop::validate
