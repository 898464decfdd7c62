#include "core/agreed_settings.h"

#include "algorithms/tuner.h"
#include "core/bootstrap.h"
#include "core/config.h"
#include "core/error.h"
#include "core/hash.h"
#include "topology/transport_choice.h"

namespace hoop {
namespace {

// A figure HOOP_TUNE_* set, as set; one it left to calibration: "measured".
std::string figure(bool fromEnv, double value) { return fromEnv ? str(value) : "measured"; }

std::string link(bool fromEnv, const LinkCost& cost) {
  return fromEnv ? str(cost.alphaUs, ",", cost.bytesPerUs / 1e3) : "measured";
}

// The transports a policy allows, by name: "shm,tcp,rdma" for any spelling of the same choice.
std::string allowed(const TransportPolicy& transports) {
  std::string names;
  for (const TransportKind kind :
       {TransportKind::kShm, TransportKind::kTcp, TransportKind::kRdma}) {
    if (!transports.allows(kind)) continue;
    names += str(names.empty() ? "" : ",", transportName(kind));
  }
  return names;
}

}  // namespace

std::array<std::string, kAgreedSettingCount> agreedSettingsText(const Config& config,
                                                                const TransportPolicy& transports) {
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
      str("HOOP_TRANSPORT=", allowed(transports)),
      str("HOOP_SHM_SLOTS=", config.shm.slots),
      str("HOOP_SHM_SLOT_SIZE=", config.shm.slotBytes),
  };
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
      const std::string mine = agreedSettingsText(config, transports)[setting];
      const std::string name = mine.substr(0, mine.find('='));
      fail(hoopInvalidUsage, "rank ", selfRank, ": ", peer.describe(), " runs with another ", name,
           " than ", peers.front().describe(),
           "; every rank must set it alike, as it decides which schedule serves a call or how "
           "peers connect (this rank has ",
           mine, ")");
    }
  }
}

}  // namespace hoop
