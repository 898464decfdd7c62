#include "hooprun/hosts.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "hooprun/usage_error.h"

namespace hoop::run {
namespace {

// Host names end up as an argument of ssh, so one starting with '-' would be read as an ssh
// option ("-oProxyCommand=..."). Allowing only name characters (and '@' for user@host) keeps the
// ssh command line free of surprises; IPv6 literals are not supported (':' separates slots).
bool isValidHostName(std::string_view name) {
  if (name.empty() || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_' || c == '@';
  });
}

std::string hostNameError(std::string_view name) {
  return "'" + std::string(name) +
         "' is not a host name (use letters, digits, '.', '-', '_' or user@host, not starting "
         "with '-')";
}

// Parses a slot count; returns 0 when the text is not a positive integer within bounds.
size_t parseSlots(std::string_view text) {
  size_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return 0;
  if (value > kMaxSlotsPerHost) return 0;
  return value;
}

std::string slotsError(std::string_view text) {
  return "slot count '" + std::string(text) + "' must be an integer from 1 to " +
         std::to_string(kMaxSlotsPerHost);
}

// "host" or "host:N". Returns an error message, empty on success.
std::string parseHostEntry(std::string_view entry, std::vector<HostSlots>& hosts) {
  std::string_view name = entry;
  size_t slots = 1;
  if (size_t colon = entry.find(':'); colon != std::string_view::npos) {
    name = entry.substr(0, colon);
    std::string_view count = entry.substr(colon + 1);
    slots = parseSlots(count);
    if (slots == 0) return slotsError(count);
  }
  if (!isValidHostName(name)) return hostNameError(name);
  addHost(hosts, name, slots);
  return {};
}

std::vector<std::string_view> splitWords(std::string_view line) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (true) {
    pos = line.find_first_not_of(" \t\r", pos);
    if (pos == std::string_view::npos) break;
    size_t end = line.find_first_of(" \t\r", pos);
    if (end == std::string_view::npos) end = line.size();
    words.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return words;
}

}  // namespace

bool isLocalHostName(std::string_view name) { return name == "localhost" || name == "127.0.0.1"; }

void addHost(std::vector<HostSlots>& hosts, std::string_view name, size_t slots) {
  std::string key = isLocalHostName(name) ? "localhost" : std::string(name);
  auto it =
      std::find_if(hosts.begin(), hosts.end(), [&](const HostSlots& h) { return h.name == key; });
  if (it != hosts.end()) {
    it->slots += slots;
  } else {
    hosts.push_back(HostSlots{std::move(key), slots});
  }
}

std::vector<HostSlots> parseHostList(std::string_view list) {
  std::vector<HostSlots> hosts;
  size_t pos = 0;
  while (true) {
    size_t comma = list.find(',', pos);
    std::string_view entry =
        list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (entry.empty()) {
      throw UsageError("-H '" + std::string(list) + "': empty host entry");
    }
    if (std::string error = parseHostEntry(entry, hosts); !error.empty()) {
      throw UsageError("-H '" + std::string(list) + "': " + error);
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return hosts;
}

std::vector<HostSlots> parseHostfile(std::string_view text, std::string_view filename) {
  std::vector<HostSlots> hosts;
  size_t line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t newline = text.find('\n', pos);
    if (newline == std::string_view::npos) newline = text.size();
    std::string_view line = text.substr(pos, newline - pos);
    pos = newline + 1;
    ++line_number;

    auto fail = [&](const std::string& what) {
      throw UsageError("hostfile " + std::string(filename) + " line " +
                       std::to_string(line_number) + ": " + what);
    };
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string_view> words = splitWords(line);
    if (words.empty()) continue;
    if (words.size() == 1) {
      if (std::string error = parseHostEntry(words[0], hosts); !error.empty()) fail(error);
      continue;
    }
    constexpr std::string_view kSlotsKey = "slots=";
    if (words.size() > 2 || words[1].substr(0, kSlotsKey.size()) != kSlotsKey) {
      fail("expected 'host slots=N' or 'host:N', got '" + std::string(line) + "'");
    }
    if (words[0].find(':') != std::string_view::npos) {
      fail("give the slot count once ('host slots=N' or 'host:N')");
    }
    if (!isValidHostName(words[0])) fail(hostNameError(words[0]));
    std::string_view count = words[1].substr(kSlotsKey.size());
    size_t slots = parseSlots(count);
    if (slots == 0) fail(slotsError(count));
    addHost(hosts, words[0], slots);
  }
  if (hosts.empty()) throw UsageError("hostfile " + std::string(filename) + " lists no hosts");
  return hosts;
}

std::vector<HostSlots> readHostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read hostfile '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parseHostfile(text.str(), path);
}

std::vector<RankPlacement> placeRanks(const std::vector<HostSlots>& hosts, size_t num_ranks) {
  size_t total = 0;
  for (const HostSlots& h : hosts) total += h.slots;
  if (total < num_ranks) {
    throw UsageError("-np " + std::to_string(num_ranks) + " needs " + std::to_string(num_ranks) +
                     " slots but the hosts offer only " + std::to_string(total) + " (" +
                     describeHosts(hosts) + ")");
  }
  std::vector<RankPlacement> placement;
  placement.reserve(num_ranks);
  for (const HostSlots& h : hosts) {
    size_t here = std::min(h.slots, num_ranks - placement.size());
    for (size_t local = 0; local < here; ++local) {
      placement.push_back(RankPlacement{h.name, local, here});
    }
    if (placement.size() == num_ranks) break;
  }
  return placement;
}

std::string describeHosts(const std::vector<HostSlots>& hosts) {
  std::string out;
  for (const HostSlots& h : hosts) {
    if (!out.empty()) out += ',';
    out += h.name + ":" + std::to_string(h.slots);
  }
  return out;
}

}  // namespace hoop::run
