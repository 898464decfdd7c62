#include "nccl/nccl_config.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "base/error.h"

namespace hoop::nccl {
namespace {

constexpr unsigned kConfigMagic = 0xcafebeef;
// The header: size, magic and version.
constexpr size_t kHeaderBytes = offsetof(ncclConfig_t, version) + sizeof(unsigned);
// ncclConfig_t first appeared in NCCL 2.14.0: a smaller version cannot come from its initializer.
constexpr unsigned kFirstConfigVersion = NCCL_VERSION(2, 14, 0);

// A field the program's struct has: inside the size it declares, and no newer than the version
// its header was (the fields of a newer NCCL than the program knew take their defaults).
bool present(const ncclConfig_t& given, size_t offset, size_t bytes, unsigned since) {
  return offset + bytes <= given.size && given.version >= since;
}

void checkFlag(int value, const char* field, const char* call) {
  if (value != NCCL_CONFIG_UNDEF_INT && value != 0 && value != 1) {
    fail(hoopInvalidArgument, call, ": config->", field, " = ", value, " is neither 0 nor 1");
  }
}

void checkPositive(int value, const char* field, const char* call) {
  if (value != NCCL_CONFIG_UNDEF_INT && value <= 0) {
    fail(hoopInvalidArgument, call, ": config->", field, " = ", value, " is not positive");
  }
}

}  // namespace

CommSettings readConfig(const ncclConfig_t* config, const char* call) {
  CommSettings settings;
  if (config == nullptr) return settings;
  const size_t size = config->size;
  if (size < kHeaderBytes) {
    fail(hoopInvalidArgument, call, ": config->size is ", size, ", smaller than the ", kHeaderBytes,
         "-byte header of ncclConfig_t: initialise the struct with NCCL_CONFIG_INITIALIZER");
  }
  // A newer NCCL's struct is longer: its extra fields are beyond what hoop reads.
  const ncclConfig_t defaults = NCCL_CONFIG_INITIALIZER;
  ncclConfig_t given = defaults;
  std::memcpy(&given, config, std::min(size, sizeof(given)));
  if (given.magic != kConfigMagic) {
    fail(hoopInvalidArgument, call, ": config->magic is 0x", std::hex, given.magic,
         ", not NCCL's 0x", kConfigMagic, std::dec,
         ": initialise the struct with NCCL_CONFIG_INITIALIZER");
  }
  if (given.version < kFirstConfigVersion) {
    fail(hoopInvalidArgument, call, ": config->version is ", given.version,
         ", older than NCCL 2.14.0 (", kFirstConfigVersion,
         "), which introduced ncclConfig_t: initialise the struct with NCCL_CONFIG_INITIALIZER");
  }
#define HOOP_NCCL_FIELD_SINCE(field, major, minor)                        \
  if (!present(given, offsetof(ncclConfig_t, field), sizeof(given.field), \
               NCCL_VERSION(major, minor, 0))) {                          \
    given.field = defaults.field;                                         \
  }
  HOOP_NCCL_FIELD_SINCE(blocking, 2, 14)
  HOOP_NCCL_FIELD_SINCE(cgaClusterSize, 2, 17)
  HOOP_NCCL_FIELD_SINCE(minCTAs, 2, 17)
  HOOP_NCCL_FIELD_SINCE(maxCTAs, 2, 17)
  HOOP_NCCL_FIELD_SINCE(netName, 2, 17)
  HOOP_NCCL_FIELD_SINCE(splitShare, 2, 18)
  HOOP_NCCL_FIELD_SINCE(trafficClass, 2, 25)
  HOOP_NCCL_FIELD_SINCE(commName, 2, 27)
  HOOP_NCCL_FIELD_SINCE(collnetEnable, 2, 27)
  HOOP_NCCL_FIELD_SINCE(CTAPolicy, 2, 27)
  HOOP_NCCL_FIELD_SINCE(shrinkShare, 2, 27)
  HOOP_NCCL_FIELD_SINCE(nvlsCTAs, 2, 27)
  HOOP_NCCL_FIELD_SINCE(nChannelsPerNetPeer, 2, 28)
  HOOP_NCCL_FIELD_SINCE(nvlinkCentricSched, 2, 28)
#undef HOOP_NCCL_FIELD_SINCE

  checkFlag(given.blocking, "blocking", call);
  if (given.cgaClusterSize != NCCL_CONFIG_UNDEF_INT && given.cgaClusterSize < 0) {
    fail(hoopInvalidArgument, call, ": config->cgaClusterSize = ", given.cgaClusterSize,
         " is negative");
  }
  checkPositive(given.minCTAs, "minCTAs", call);
  checkPositive(given.maxCTAs, "maxCTAs", call);
  if (given.minCTAs != NCCL_CONFIG_UNDEF_INT && given.maxCTAs != NCCL_CONFIG_UNDEF_INT &&
      given.minCTAs > given.maxCTAs) {
    fail(hoopInvalidArgument, call, ": config->minCTAs = ", given.minCTAs,
         " is above config->maxCTAs = ", given.maxCTAs);
  }
  checkFlag(given.splitShare, "splitShare", call);
  checkFlag(given.collnetEnable, "collnetEnable", call);
  if (given.CTAPolicy != NCCL_CONFIG_UNDEF_INT &&
      (given.CTAPolicy < 0 ||
       given.CTAPolicy > (NCCL_CTA_POLICY_EFFICIENCY | NCCL_CTA_POLICY_ZERO))) {
    fail(hoopInvalidArgument, call, ": config->CTAPolicy = ", given.CTAPolicy,
         " is not a combination of the NCCL_CTA_POLICY_* flags");
  }
  checkFlag(given.shrinkShare, "shrinkShare", call);
  checkPositive(given.nvlsCTAs, "nvlsCTAs", call);
  checkPositive(given.nChannelsPerNetPeer, "nChannelsPerNetPeer", call);
  checkFlag(given.nvlinkCentricSched, "nvlinkCentricSched", call);

  // What hoop has a counterpart for; the rest tune NCCL's kernels and networks.
  settings.hoop.blocking = given.blocking;
  if (given.commName != nullptr) settings.name = given.commName;
  return settings;
}

}  // namespace hoop::nccl
