#include "options.h"

#include <cerrno>
#include <cstdlib>

namespace hoop {

const char* const kToolSynopsis =
    "usage: hoop-topo [--json]\n"
    "       hoop-topo [--json] --hosts HOST,HOST,... [--rank R [--gpu G] [--cpu PU]]\n";

const char* const kToolDetails =
    "\n"
    "Prints the machine as hoop sees it: packages, NUMA nodes, cores and caches, and the GPUs\n"
    "and NICs local to each NUMA node.\n"
    "\n"
    "  --json         the same as JSON (fields: tools/hoop-topo/README.md)\n"
    "  --hosts LIST   host name of each rank, by rank (e.g. a,a,b,b): prints the ring order\n"
    "                 and each host's ranks instead of the machine\n"
    "  --rank R       with --hosts: rank R's local rank, the transport to each peer, and the\n"
    "                 NIC and NUMA node it would use on this machine\n"
    "  --gpu G        with --rank: the rank drives GPU G (position in the GPU list)\n"
    "  --cpu PU       with --rank: the rank runs on PU (OS index)\n"
    "  -h, --help     this text\n"
    "\n"
    "Environment: HOOP_TOPO_FILE=path.xml reads an hwloc XML export instead of this machine;\n"
    "HOOP_TRANSPORT=tcp forces a transport, ^shm excludes one.\n"
    "Exit status: 0 ok, 1 error (bad topology file, unreachable peer), 2 bad usage.\n";

namespace {

unsigned long long parseCount(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || end == text.c_str() || *end != '\0' || errno != 0 ||
      value > 0x7fffffff) {
    throw UsageError(option + " takes a non-negative number, not '" + text + "'");
  }
  return value;
}

std::vector<std::string> splitHosts(const std::string& text) {
  std::vector<std::string> hosts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string host = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (host.empty()) throw UsageError("--hosts '" + text + "' has an empty host name");
    hosts.push_back(host);
    if (comma == std::string::npos) return hosts;
    start = comma + 1;
  }
}

}  // namespace

ToolOptions parseToolOptions(const std::vector<std::string>& args) {
  ToolOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::string value;
    bool hasValue = false;
    // --name=value and --name value both work.
    if (size_t equals = arg.find('='); arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = arg.substr(equals + 1);
      arg = arg.substr(0, equals);
      hasValue = true;
    }
    auto takeValue = [&]() {
      if (hasValue) return value;
      if (i + 1 >= args.size()) throw UsageError(arg + " needs a value");
      return args[++i];
    };
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--hosts") {
      options.hosts = splitHosts(takeValue());
    } else if (arg == "--rank") {
      options.rank = static_cast<int>(parseCount(arg, takeValue()));
    } else if (arg == "--gpu") {
      options.gpu = static_cast<size_t>(parseCount(arg, takeValue()));
    } else if (arg == "--cpu") {
      options.cpu = static_cast<unsigned>(parseCount(arg, takeValue()));
    } else {
      throw UsageError("unknown argument '" + args[i] + "'");
    }
    if (hasValue && (arg == "-h" || arg == "--help" || arg == "--json")) {
      throw UsageError(arg + " takes no value");
    }
  }
  if (options.help) return options;
  if (options.rank && options.hosts.empty()) throw UsageError("--rank needs --hosts");
  if (options.rank && static_cast<size_t>(*options.rank) >= options.hosts.size()) {
    throw UsageError("--rank " + std::to_string(*options.rank) +
                     " is out of range: --hosts names " + std::to_string(options.hosts.size()) +
                     " ranks");
  }
  if ((options.gpu || options.cpu) && !options.rank)
    throw UsageError("--gpu and --cpu need --rank");
  return options;
}

}  // namespace hoop
