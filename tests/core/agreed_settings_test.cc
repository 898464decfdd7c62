// The settings every rank must share (core/agreed_settings.h): what each rank brings to the
// rendezvous, and the error a difference makes.
#include "core/agreed_settings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/algo_overrides.h"
#include "base/error.h"
#include "core/bootstrap.h"
#include "core/bootstrap_wire.h"
#include "core/config.h"
#include "transport/transport_registry.h"

namespace hoop {
namespace {

TEST(AgreedSettings, EachSettingHasItsOwnDigest) {
  const Config defaults;
  const TransportPolicy any;
  EXPECT_EQ(agreedSettingsText(defaults, any),
            (std::array<std::string, kAgreedSettingCount>{
                "HOOP_ALGO (or config->algorithms)=\"\"", "HOOP_CHUNK_SIZE=unset",
                "HOOP_TUNE_CALIBRATE=0", "HOOP_TUNE_TRIAL=0", "HOOP_TUNE_WATCH=0",
                "HOOP_TUNE_SHM=measured", "HOOP_TUNE_TCP=measured", "HOOP_TUNE_REDUCE=measured",
                "HOOP_TRANSPORT=shm,rdma,tcp", "HOOP_SHM_SLOTS=8", "HOOP_SHM_SLOT_SIZE=524288"}));
  // Each change moves its own digest and no other.
  std::vector<Config> changed(kAgreedSettingCount);
  changed[0].algorithms = AlgoOverrides::parse("allreduce:=ring");
  changed[1].chunkSetByUser = true;
  changed[2].costModel.calibrate = true;
  changed[3].costModel.trial = true;
  changed[4].costModel.watchCalls = 4096;
  changed[5].costModel.shmFromEnv = true;
  changed[6].costModel.tcpFromEnv = true;
  changed[6].costModel.tcp = {1, 40000};
  changed[7].costModel.reduceFromEnv = true;
  changed[9].shm.slots = 4;
  changed[10].shm.slotBytes = 64 << 10;
  const TransportPolicy tcpOnly = TransportPolicy::parse("tcp");
  const SettingDigests base = digestSettings(defaults, any);
  for (size_t setting = 0; setting < kAgreedSettingCount; ++setting) {
    // HOOP_TRANSPORT is the policy's, not the config's.
    const SettingDigests digests = digestSettings(changed[setting], setting == 8 ? tcpOnly : any);
    for (size_t other = 0; other < kAgreedSettingCount; ++other) {
      EXPECT_EQ(digests[other] != base[other], other == setting) << setting << " moved " << other;
    }
  }
  EXPECT_EQ(agreedSettingsText(changed[6], any)[6], "HOOP_TUNE_TCP=1,40");
  EXPECT_EQ(agreedSettingsText(defaults, tcpOnly)[8], "HOOP_TRANSPORT=tcp");
  // The same value set twice is the same digest: a chunk size is compared by its bytes, a
  // transport policy by what it allows, however it was spelt.
  Config chunk = changed[1];
  EXPECT_EQ(digestSettings(chunk, any), digestSettings(changed[1], any));
  chunk.chunkBytes *= 2;
  EXPECT_NE(digestSettings(chunk, any)[1], digestSettings(changed[1], any)[1]);
  EXPECT_EQ(digestSettings(defaults, TransportPolicy::parse("^shm,rdma")),
            digestSettings(defaults, tcpOnly));
  EXPECT_EQ(digestSettings(defaults, TransportPolicy::parse("shm,tcp,rdma")), base);
}

// Three ranks' rendezvous table, each with `config`'s digests.
std::vector<PeerInfo> table(const Config& config) {
  std::vector<PeerInfo> peers(3);
  for (int r = 0; r < 3; ++r) {
    peers[r].rank = r;
    peers[r].pid = 100 + r;
    peers[r].hostName = "h";
    peers[r].settings = digestSettings(config, TransportPolicy());
  }
  return peers;
}

TEST(AgreedSettings, ADifferenceFailsNamingTheSettingAndTheRank) {
  const Config defaults;
  const TransportPolicy any;
  EXPECT_NO_THROW(checkSettingsAgree(table(defaults), 1, defaults, any));
  Config watched;
  watched.costModel.watchCalls = 64;
  std::vector<PeerInfo> peers = table(defaults);
  peers[2].settings = digestSettings(watched, any);
  try {
    checkSettingsAgree(peers, 0, defaults, any);
    FAIL() << "a differing HOOP_TUNE_WATCH passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidUsage);
    EXPECT_NE(std::string(e.what()).find("rank 0: rank 2 (host h, pid 102) runs with another "
                                         "HOOP_TUNE_WATCH than rank 0 (host h, pid 100)"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("(this rank has HOOP_TUNE_WATCH=0)"), std::string::npos)
        << e.what();
  }
  // Two differences: the first setting is named, and the first rank that differs in it.
  Config forced = watched;
  forced.algorithms = AlgoOverrides::parse("tree");
  peers[1].settings = digestSettings(forced, any);
  try {
    checkSettingsAgree(peers, 2, watched, any);
    FAIL() << "differing settings passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2: rank 1 (host h, pid 101) runs with another "
                                         "HOOP_ALGO (or config->algorithms) than rank 0"),
              std::string::npos)
        << e.what();
  }
}

TEST(AgreedSettings, TheDigestsTravelInTheRegistration) {
  Config watched;
  watched.costModel.watchCalls = 4096;
  Registration sent;
  sent.nranks = 2;
  sent.info.hostName = "h";
  sent.info.listenAddress = SocketAddress::parse("127.0.0.1:5000");
  sent.info.settings = digestSettings(watched, TransportPolicy());
  const Registration received = decodeRegistration(encodeRegistration(sent));
  EXPECT_EQ(received.info.settings, sent.info.settings);
  EXPECT_EQ(encodeRegistration(sent).size(), registrationBytes());
}

}  // namespace
}  // namespace hoop
