#include "transport/rdma/gid_table.h"

#include <arpa/inet.h>

#include <cstdio>
#include <fstream>

#include "base/error.h"

namespace hoop {

const char* gidTypeName(GidType type) {
  switch (type) {
    case GidType::kInfiniBand: return "InfiniBand";
    case GidType::kRoceV1: return "RoCE v1";
    case GidType::kRoceV2: return "RoCE v2";
    case GidType::kUnknown: break;
  }
  return "unknown";
}

const char* linkLayerName(LinkLayer layer) {
  switch (layer) {
    case LinkLayer::kInfiniBand: return "InfiniBand";
    case LinkLayer::kEthernet: return "Ethernet";
    case LinkLayer::kUnknown: break;
  }
  return "unknown";
}

std::string gidText(const Gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, gid.data(), text, sizeof(text)) == nullptr) return "?";
  return text;
}

std::optional<Gid> parseGid(const std::string& text) {
  // Exactly eight groups of four hex digits separated by colons, as sysfs prints them.
  if (text.size() != 39) return std::nullopt;
  Gid gid{};
  for (size_t group = 0; group < 8; ++group) {
    const size_t at = group * 5;
    if (group < 7 && text[at + 4] != ':') return std::nullopt;
    unsigned value = 0;
    for (size_t digit = 0; digit < 4; ++digit) {
      const char c = text[at + digit];
      unsigned nibble = 0;
      if (c >= '0' && c <= '9') {
        nibble = static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        nibble = static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        nibble = static_cast<unsigned>(c - 'A' + 10);
      } else {
        return std::nullopt;
      }
      value = value << 4 | nibble;
    }
    gid[group * 2] = static_cast<uint8_t>(value >> 8);
    gid[group * 2 + 1] = static_cast<uint8_t>(value);
  }
  return gid;
}

bool isZeroGid(const Gid& gid) {
  for (uint8_t byte : gid) {
    if (byte != 0) return false;
  }
  return true;
}

bool isIpv4Mapped(const Gid& gid) {
  for (size_t i = 0; i < 10; ++i) {
    if (gid[i] != 0) return false;
  }
  return gid[10] == 0xff && gid[11] == 0xff;
}

bool isLinkLocal(const Gid& gid) { return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80; }

namespace {

std::optional<std::string> readLine(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  if (!file || !std::getline(file, line)) return std::nullopt;
  return line;
}

GidType typeFromText(const std::string& text) {
  if (text == "RoCE v2") return GidType::kRoceV2;
  if (text == "IB/RoCE v1") return GidType::kRoceV1;  // the link layer tells IB from RoCE v1
  return GidType::kUnknown;
}

// A preference rank for a RoCE GID, lower is better; -1: not a candidate.
int roceRank(const GidEntry& entry) {
  if (entry.type == GidType::kRoceV2) {
    if (isIpv4Mapped(entry.gid)) return 0;
    return isLinkLocal(entry.gid) ? 2 : 1;
  }
  if (entry.type == GidType::kRoceV1) return isIpv4Mapped(entry.gid) ? 3 : 4;
  return -1;
}

}  // namespace

std::vector<GidEntry> readGidTable(const std::string& portDirectory) {
  std::vector<GidEntry> table;
  // Tables are small (16 to 256 entries); an entry that cannot be read ends nothing, as sysfs
  // refuses reads of unused entries' types.
  for (int index = 0; index < 256; ++index) {
    const auto line = readLine(portDirectory + "/gids/" + std::to_string(index));
    if (!line) break;
    const auto gid = parseGid(*line);
    if (!gid || isZeroGid(*gid)) continue;
    GidEntry entry;
    entry.index = index;
    entry.gid = *gid;
    if (const auto type = readLine(portDirectory + "/gid_attrs/types/" + std::to_string(index))) {
      entry.type = typeFromText(*type);
    }
    table.push_back(entry);
  }
  return table;
}

GidChoice chooseGid(const std::vector<GidEntry>& table, LinkLayer layer,
                    std::optional<int> requested) {
  GidChoice choice;
  auto take = [&](const GidEntry& entry) {
    choice.index = entry.index;
    choice.gid = entry.gid;
    choice.type = layer == LinkLayer::kInfiniBand ? GidType::kInfiniBand : entry.type;
    return choice;
  };
  if (requested) {
    for (const GidEntry& entry : table) {
      if (entry.index == *requested) return take(entry);
    }
    choice.why = str("HOOP_IB_GID_INDEX=", *requested, " names no GID of this port (", table.size(),
                     " in use)");
    return choice;
  }
  if (table.empty()) {
    choice.why = "the port's GID table is empty (no IP address on its interface?)";
    return choice;
  }
  if (layer == LinkLayer::kInfiniBand) return take(table.front());
  const GidEntry* best = nullptr;
  int bestRank = -1;
  for (const GidEntry& entry : table) {
    const int rank = roceRank(entry);
    if (rank >= 0 && (best == nullptr || rank < bestRank)) {
      best = &entry;
      bestRank = rank;
    }
  }
  if (best == nullptr) {
    choice.why = "no RoCE GID in the port's table (types unreadable?); set HOOP_IB_GID_INDEX";
    return choice;
  }
  return take(*best);
}

}  // namespace hoop
