#include "core/agreed_settings.h"

#include "algorithms/tuner.h"
#include "core/bootstrap.h"
#include "core/config.h"
#include "core/error.h"
#include "core/hash.h"

namespace hoop {
namespace {

// A figure HOOP_TUNE_* set, as set; one it left to calibration: "measured".
std::string figure(bool fromEnv, double value) { return fromEnv ? str(value) : "measured"; }

std::string link(bool fromEnv, const LinkCost& cost) {
  return fromEnv ? str(cost.alphaUs, ",", cost.bytesPerUs / 1e3) : "measured";
}

}  // namespace

std::array<std::string, kAgreedSettingCount> agreedSettingsText(const Config& config) {
  const CostModel& model = config.costModel;
  return {
      str("HOOP_ALGO (or config->algorithms)=\"", config.algorithms.text(), "\""),
      str("HOOP_CHUNK_SIZE=", config.chunkSetByUser ? str(config.chunkBytes) : "unset"),
      str("HOOP_TUNE_CALIBRATE=", model.calibrate ? 1 : 0),
      str("HOOP_TUNE_TRIAL=", model.trial ? 1 : 0),
      str("HOOP_TUNE_WATCH=", model.watchCalls),
      str("HOOP_TUNE_SHM=", link(model.shmFromEnv, model.shm)),
      str("HOOP_TUNE_TCP=", link(model.tcpFromEnv, model.tcp)),
      str("HOOP_TUNE_REDUCE=", figure(model.reduceFromEnv, model.reduceBytesPerUs / 1e3)),
  };
}

SettingDigests digestSettings(const Config& config) {
  const std::array<std::string, kAgreedSettingCount> texts = agreedSettingsText(config);
  SettingDigests digests{};
  for (size_t i = 0; i < kAgreedSettingCount; ++i) digests[i] = fnv1a(texts[i]);
  return digests;
}

void checkSettingsAgree(const std::vector<PeerInfo>& peers, int selfRank, const Config& config) {
  for (size_t setting = 0; setting < kAgreedSettingCount; ++setting) {
    for (const PeerInfo& peer : peers) {
      if (peer.settings[setting] == peers.front().settings[setting]) continue;
      const std::string mine = agreedSettingsText(config)[setting];
      const std::string name = mine.substr(0, mine.find('='));
      fail(hoopInvalidUsage, "rank ", selfRank, ": ", peer.describe(), " runs with another ", name,
           " than ", peers.front().describe(),
           "; every rank must set it alike, or ranks may run different schedules on one call "
           "(this rank has ",
           mine, ")");
    }
  }
}

}  // namespace hoop
