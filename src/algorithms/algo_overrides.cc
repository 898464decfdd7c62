#include "algorithms/algo_overrides.h"

#include <cstdint>

#include "algorithms/registry.h"
#include "base/env.h"
#include "base/error.h"

namespace hoop {
namespace {

constexpr OpKind kCollectives[] = {OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter,
                                   OpKind::kBroadcast, OpKind::kReduce,    OpKind::kAllToAll};

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    parts.push_back(trim(text.substr(start, at == std::string_view::npos ? at : at - start)));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

std::string namesOf(OpKind kind) {
  std::string names;
  for (const AlgorithmEntry& entry : algorithmRegistry()) {
    if (entry.kind == kind) names += str(names.empty() ? "" : ", ", entry.name());
  }
  return names;
}

std::string collectiveNames() {
  std::string names;
  for (OpKind kind : kCollectives) names += str(names.empty() ? "" : ", ", opKindName(kind));
  return names;
}

}  // namespace

AlgoOverrides AlgoOverrides::parse(std::string_view text) {
  AlgoOverrides overrides;
  overrides.text_ = std::string(text);
  auto bad = [&](std::string_view token, const std::string& why) {
    fail(hoopInvalidArgument, "HOOP_ALGO='", text, "': '", token, "' ", why);
  };
  for (std::string_view item : split(text, ';')) {
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      // A bare name: every collective that has it.
      bool any = false;
      for (OpKind kind : kCollectives) {
        const AlgorithmEntry* schedule = findAlgorithm(kind, item);
        if (schedule == nullptr) continue;
        overrides.rules_.push_back({kind, 0, SIZE_MAX, schedule});
        any = true;
      }
      if (!any) {
        bad(item, "is no schedule of any collective (schedules: allreduce: " +
                      namesOf(OpKind::kAllReduce) + "; allgather: " + namesOf(OpKind::kAllGather) +
                      "; broadcast: " + namesOf(OpKind::kBroadcast) +
                      "; or COLLECTIVE:RANGE=NAME rules)");
      }
      continue;
    }
    const std::string_view collective = trim(item.substr(0, colon));
    OpKind kind{};
    bool known = false;
    for (OpKind candidate : kCollectives) {
      if (opKindName(candidate) == collective) kind = candidate, known = true;
    }
    if (!known) bad(collective, "is not a collective (" + collectiveNames() + ")");
    for (std::string_view rule : split(item.substr(colon + 1), ',')) {
      const size_t equals = rule.find('=');
      if (equals == std::string_view::npos) {
        bad(rule, "has no '=NAME' (a rule is RANGE=NAME, e.g. 0-64K=ring or =ring)");
      }
      const std::string_view range = trim(rule.substr(0, equals));
      const std::string_view name = trim(rule.substr(equals + 1));
      const AlgorithmEntry* schedule = findAlgorithm(kind, name);
      if (schedule == nullptr) {
        bad(name, str("is not a schedule of ", opKindName(kind), " (", namesOf(kind), ")"));
      }
      size_t low = 0;
      size_t high = SIZE_MAX;
      if (!range.empty()) {
        const size_t dash = range.find('-');
        if (dash == std::string_view::npos) {
          bad(range, "is not a size range (LOW-HIGH, either may be left out: 0-64K, 64K-)");
        }
        auto size = [&](std::string_view end, size_t fallback) {
          if (trim(end).empty()) return fallback;
          auto bytes = parseByteSize(std::string(trim(end)));
          if (!bytes) bad(end, "is not a size (bytes, or with K, M, G)");
          return *bytes;
        };
        low = size(range.substr(0, dash), 0);
        high = size(range.substr(dash + 1), SIZE_MAX);
        if (low >= high) bad(range, "is an empty range (the upper end is exclusive)");
      }
      overrides.rules_.push_back({kind, low, high, schedule});
    }
  }
  return overrides;
}

const AlgorithmEntry* AlgoOverrides::forced(OpKind kind, size_t bytes) const {
  for (const Rule& rule : rules_) {
    if (rule.kind == kind && bytes >= rule.low && bytes < rule.high) return rule.schedule;
  }
  return nullptr;
}

}  // namespace hoop
