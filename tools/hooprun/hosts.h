// Host lists (-H a:2,b:2 and --hostfile) and the placement of ranks onto their slots.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hoop::run {

struct HostSlots {
  std::string name;  // as given, except that local aliases are spelled "localhost"
  size_t slots = 0;

  bool operator==(const HostSlots&) const = default;
};

// Where one rank runs and its place among the ranks of that host.
struct RankPlacement {
  std::string host;
  size_t local_rank = 0;
  size_t local_size = 0;

  bool operator==(const RankPlacement&) const = default;
};

// The most slots one host may declare; far above any real machine, low enough to catch typos.
inline constexpr size_t kMaxSlotsPerHost = 1 << 20;

// "a:2,b,c:4" (a host without ":N" has one slot). Throws UsageError naming the bad entry.
std::vector<HostSlots> parseHostList(std::string_view list);

// Hostfile text: one host per line as "host", "host:N" or "host slots=N"; '#' starts a comment.
// `filename` only appears in error messages ("hostfile F line 3: ...").
std::vector<HostSlots> parseHostfile(std::string_view text, std::string_view filename);

// Reads and parses a hostfile; throws UsageError when it cannot be read.
std::vector<HostSlots> readHostfile(const std::string& path);

// True for the names that mean "this machine" without asking DNS: localhost and 127.0.0.1.
bool isLocalHostName(std::string_view name);

// Appends a host, merging it into an earlier entry of the same name so that a host listed twice
// still gets contiguous ranks and one local numbering.
void addHost(std::vector<HostSlots>& hosts, std::string_view name, size_t slots);

// Fills each host's slots in order. Throws UsageError when the hosts offer fewer than
// `num_ranks` slots. Hosts left without ranks do not appear in the result.
std::vector<RankPlacement> placeRanks(const std::vector<HostSlots>& hosts, size_t num_ranks);

// "a:2,b:2", for messages.
std::string describeHosts(const std::vector<HostSlots>& hosts);

}  // namespace hoop::run
