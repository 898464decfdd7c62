#include "core/slurm_step.h"

#include <cctype>

#include "base/env.h"
#include "base/error.h"

namespace hoop {
namespace {

constexpr size_t kMaxHosts = 1u << 20;

[[noreturn]] void malformed(const std::string& hostlist, const std::string& why) {
  fail(hoopInvalidArgument, "Slurm hostlist '", hostlist, "': ", why);
}

bool allDigits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The numbers of one bracket group ("01-03,7"), as text, each as wide as its range's lower bound.
std::vector<std::string> expandGroup(const std::string& group, const std::string& hostlist) {
  std::vector<std::string> numbers;
  size_t start = 0;
  while (start <= group.size()) {
    size_t comma = group.find(',', start);
    if (comma == std::string::npos) comma = group.size();
    std::string range = group.substr(start, comma - start);
    size_t dash = range.find('-');
    std::string low = range.substr(0, dash);
    std::string high = dash == std::string::npos ? low : range.substr(dash + 1);
    if (!allDigits(low) || !allDigits(high) || low.size() > 18 || high.size() > 18) {
      malformed(hostlist, str("'", range, "' is not a number or a range of numbers"));
    }
    unsigned long long first = std::stoull(low);
    unsigned long long last = std::stoull(high);
    if (last < first) malformed(hostlist, str("the range '", range, "' runs backwards"));
    if (last - first >= kMaxHosts || numbers.size() + (last - first) >= kMaxHosts) {
      malformed(hostlist, str("names more than ", kMaxHosts, " hosts"));
    }
    for (unsigned long long n = first; n <= last; ++n) {
      std::string digits = std::to_string(n);
      if (digits.size() < low.size()) digits.insert(0, low.size() - digits.size(), '0');
      numbers.push_back(std::move(digits));
    }
    start = comma + 1;
  }
  return numbers;
}

// One name of the list ("r[1-2]n[01-02]") multiplied out, appended to `hosts`.
void expandName(const std::string& name, const std::string& hostlist,
                std::vector<std::string>& hosts) {
  if (name.empty()) malformed(hostlist, "it has an empty name");
  std::vector<std::string> partial{""};
  size_t at = 0;
  while (at < name.size()) {
    size_t open = name.find('[', at);
    std::string literal =
        name.substr(at, open == std::string::npos ? std::string::npos : open - at);
    if (literal.find(']') != std::string::npos) malformed(hostlist, "a ']' has no '['");
    for (std::string& prefix : partial) prefix += literal;
    if (open == std::string::npos) break;
    size_t close = name.find(']', open);
    if (close == std::string::npos) malformed(hostlist, "a '[' has no ']'");
    std::vector<std::string> numbers =
        expandGroup(name.substr(open + 1, close - open - 1), hostlist);
    if (partial.size() * numbers.size() + hosts.size() > kMaxHosts) {
      malformed(hostlist, str("names more than ", kMaxHosts, " hosts"));
    }
    std::vector<std::string> longer;
    longer.reserve(partial.size() * numbers.size());
    for (const std::string& prefix : partial) {
      for (const std::string& number : numbers) longer.push_back(prefix + number);
    }
    partial = std::move(longer);
    at = close + 1;
  }
  for (std::string& host : partial) hosts.push_back(std::move(host));
}

uint64_t slurmId(const char* name) {
  auto text = envString(name);
  if (!text) fail(hoopInvalidArgument, name, " is not set");
  if (!allDigits(*text) || text->size() > 19) {
    fail(hoopInvalidArgument, name, "='", *text, "' is not a job or step number");
  }
  return std::stoull(*text);
}

}  // namespace

std::vector<std::string> expandSlurmHostlist(const std::string& hostlist) {
  std::vector<std::string> hosts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= hostlist.size(); ++i) {
    char c = i < hostlist.size() ? hostlist[i] : ',';
    if (c == '[') {
      if (++depth > 1) malformed(hostlist, "brackets are nested");
    } else if (c == ']') {
      if (--depth < 0) malformed(hostlist, "a ']' has no '['");
    } else if (c == ',' && depth == 0) {
      expandName(hostlist.substr(start, i - start), hostlist, hosts);
      start = i + 1;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      malformed(hostlist, "it contains white space");
    }
  }
  if (depth != 0) malformed(hostlist, "a '[' has no ']'");
  return hosts;
}

uint16_t slurmRendezvousPort(uint64_t jobId, uint64_t stepId) {
  constexpr uint64_t kFirstPort = 20000;
  constexpr uint64_t kPorts = 32768 - kFirstPort;  // 12768 = 798 jobs of 16 steps
  return static_cast<uint16_t>(kFirstPort + (jobId * 16 + stepId) % kPorts);
}

SlurmStepRoot slurmStepRoot() {
  SlurmStepRoot root;
  auto nodes = envString("SLURM_STEP_NODELIST");
  if (!nodes) fail(hoopInvalidArgument, "SLURM_STEP_NODELIST is not set");
  std::vector<std::string> hosts = expandSlurmHostlist(*nodes);
  if (hosts.empty()) fail(hoopInvalidArgument, "SLURM_STEP_NODELIST is empty");
  root.host = hosts.front();
  root.jobId = slurmId("SLURM_JOB_ID");
  root.stepId = slurmId("SLURM_STEP_ID");
  root.port = slurmRendezvousPort(root.jobId, root.stepId);
  return root;
}

}  // namespace hoop
