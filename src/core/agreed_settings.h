// The settings every rank must share. hoop's choice of schedule for a call, and the pieces it
// cuts, follow from these; ranks that differ in one can run different schedules on the same call,
// which fails on a mismatched message at best and exchanges the wrong pieces at worst. So each
// rank brings a digest of each to the rendezvous, which hands every rank everyone's, and a
// communicator whose ranks differ in one fails to initialise on every rank, naming the setting
// and the first rank that differs from rank 0.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hoop {

struct Config;
struct PeerInfo;
class TransportPolicy;

// HOOP_ALGO (or config->algorithms), HOOP_CHUNK_SIZE, HOOP_TUNE_CALIBRATE, HOOP_TUNE_TRIAL,
// HOOP_TUNE_WATCH, and the figures HOOP_TUNE_SHM, HOOP_TUNE_TCP and HOOP_TUNE_REDUCE set (the
// rest of the cost model is agreed at init: calibration.h). And what peers must share to connect
// at all: HOOP_TRANSPORT (which also decides whether one-shot can serve a call) and the shm
// slots' layout, HOOP_SHM_SLOTS and HOOP_SHM_SLOT_SIZE; a difference in those failed the first
// connection with a message about counts or the order of calls, which did not say why.
inline constexpr size_t kAgreedSettingCount = 11;
using SettingDigests = std::array<uint64_t, kAgreedSettingCount>;

// Each setting's name and this rank's value, as a message shows it ("HOOP_TUNE_WATCH=4096"; a
// setting left alone shows its default), in a fixed order.
std::array<std::string, kAgreedSettingCount> agreedSettingsText(const Config& config,
                                                                const TransportPolicy& transports);
// The digest of each of those texts, as the rendezvous carries them.
SettingDigests digestSettings(const Config& config, const TransportPolicy& transports);

// Throws hoopInvalidUsage where any rank's digests differ from rank 0's: the first such setting
// and rank, with this rank's own value. `peers` is the rendezvous table, by rank.
void checkSettingsAgree(const std::vector<PeerInfo>& peers, int selfRank, const Config& config,
                        const TransportPolicy& transports);

}  // namespace hoop
