#include "core/agreed_settings.h"

#include <string_view>
#include <utility>

#include "algorithms/tuner.h"
#include "base/error.h"
#include "base/hash.h"
#include "core/bootstrap.h"
#include "core/config.h"
#include "transport/transport_registry.h"

namespace hoop {
namespace {

// A figure HOOP_TUNE_* set, as set; one it left to calibration: "measured".
std::string figure(bool fromEnv, double value) { return fromEnv ? str(value) : "measured"; }

std::string link(bool fromEnv, const LinkCost& cost) {
  return fromEnv ? str(cost.alphaUs, ",", cost.bytesPerUs / 1e3) : "measured";
}

// The transports a policy allows, by name: "shm,rdma,tcp" for any spelling of the same choice.
std::string allowed(const TransportPolicy& transports) {
  std::string names;
  for (const Transport* transport : TransportRegistry::global().all()) {
    if (!transports.allows(transport->name())) continue;
    names += str(names.empty() ? "" : ",", transport->name());
  }
  return names;
}

// Each setting's name and this rank's value, in agreedSettingsText()'s order.
std::array<std::pair<std::string_view, std::string>, kAgreedSettingCount> agreedSettings(
    const Config& config, const TransportPolicy& transports) {
  const CostModel& model = config.costModel;
  return {{
      {"HOOP_ALGO (or config->algorithms)", str("\"", config.algorithms.text(), "\"")},
      {"HOOP_CHUNK_SIZE", config.chunkSetByUser ? str(config.chunkBytes) : "unset"},
      {"HOOP_TUNE_CALIBRATE", str(model.calibrate ? 1 : 0)},
      {"HOOP_TUNE_TRIAL", str(model.trial ? 1 : 0)},
      {"HOOP_TUNE_WATCH", str(model.watchCalls)},
      {"HOOP_TUNE_SHM", link(model.shmFromEnv, model.shm)},
      {"HOOP_TUNE_TCP", link(model.tcpFromEnv, model.tcp)},
      {"HOOP_TUNE_REDUCE", figure(model.reduceFromEnv, model.reduceBytesPerUs / 1e3)},
      {"HOOP_TRANSPORT", allowed(transports)},
      {"HOOP_SHM_SLOTS", str(config.shm.slots)},
      {"HOOP_SHM_SLOT_SIZE", str(config.shm.slotBytes)},
  }};
}

}  // namespace

std::array<std::string, kAgreedSettingCount> agreedSettingsText(const Config& config,
                                                                const TransportPolicy& transports) {
  std::array<std::string, kAgreedSettingCount> texts;
  const auto settings = agreedSettings(config, transports);
  for (size_t i = 0; i < kAgreedSettingCount; ++i) {
    texts[i] = str(settings[i].first, "=", settings[i].second);
  }
  return texts;
}

SettingDigests digestSettings(const Config& config, const TransportPolicy& transports) {
  const std::array<std::string, kAgreedSettingCount> texts = agreedSettingsText(config, transports);
  SettingDigests digests{};
  for (size_t i = 0; i < kAgreedSettingCount; ++i) digests[i] = fnv1a(texts[i]);
  return digests;
}

void checkSettingsAgree(const std::vector<PeerInfo>& peers, int selfRank, const Config& config,
                        const TransportPolicy& transports) {
  for (size_t setting = 0; setting < kAgreedSettingCount; ++setting) {
    for (const PeerInfo& peer : peers) {
      if (peer.settings[setting] == peers.front().settings[setting]) continue;
      const auto [name, value] = agreedSettings(config, transports)[setting];
      fail(hoopInvalidUsage, "rank ", selfRank, ": ", peer.describe(), " runs with another ", name,
           " than ", peers.front().describe(),
           "; every rank must set it alike, as it decides which schedule serves a call or how "
           "peers connect (this rank has ",
           name, "=", value, ")");
    }
  }
}

}  // namespace hoop
