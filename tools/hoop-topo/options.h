// hoop-topo's command line.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hoop {

struct ToolOptions {
  bool help = false;
  bool json = false;
  std::vector<std::string> hosts;  // --hosts: host name of each rank, by rank
  std::optional<int> rank;         // --rank: show this rank's transports, NIC and NUMA node
  std::optional<size_t> gpu;       // --gpu: the GPU that rank drives
  std::optional<unsigned> cpu;     // --cpu: the PU that rank runs on
};

// A command line hoop-topo cannot run: exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses the arguments after the program name. Throws UsageError.
ToolOptions parseToolOptions(const std::vector<std::string>& args);

// The usage lines (printed after a usage error), and the rest of the --help text.
extern const char* const kToolSynopsis;
extern const char* const kToolDetails;

}  // namespace hoop
