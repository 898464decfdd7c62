// A port's GID table and the choice of the GID a connection uses (HOOP_IB_GID_INDEX).
//
// InfiniBand ports address by LID and use the port GID (index 0). RoCE ports carry one GID per
// IP address of their network interface and per RoCE version; hoop picks, unless told an index,
// a RoCE v2 GID (routable UDP/IP encapsulation) of an IPv4 address first, then of a global IPv6
// address, and RoCE v1 only where no v2 GID exists. The table is read from sysfs
// (/sys/class/infiniband/DEV/ports/P/gids/I and gid_attrs/types/I), so tests hand it a fake one.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hoop {

enum class GidType : uint8_t { kUnknown = 0, kInfiniBand = 1, kRoceV1 = 2, kRoceV2 = 3 };
enum class LinkLayer : uint8_t { kUnknown = 0, kInfiniBand = 1, kEthernet = 2 };

using Gid = std::array<uint8_t, 16>;

struct GidEntry {
  int index = 0;
  Gid gid{};
  GidType type = GidType::kUnknown;
};

// "RoCE v2", "InfiniBand": for messages.
const char* gidTypeName(GidType type);
const char* linkLayerName(LinkLayer layer);
// "fe80::248a:703:49:d4f0"-style text of a GID (IPv4-mapped ones as "::ffff:10.0.2.15").
std::string gidText(const Gid& gid);
// Reads sysfs's "fe80:0000:0000:0000:5054:00ff:fe12:3456"; nullopt for anything else.
std::optional<Gid> parseGid(const std::string& text);
bool isZeroGid(const Gid& gid);
bool isIpv4Mapped(const Gid& gid);
bool isLinkLocal(const Gid& gid);

// The non-zero entries of one port's table, from `portDirectory`
// (/sys/class/infiniband/DEV/ports/P); entries whose type cannot be read are kUnknown.
std::vector<GidEntry> readGidTable(const std::string& portDirectory);

struct GidChoice {
  int index = -1;  // -1: none; `why` says why
  GidType type = GidType::kUnknown;
  Gid gid{};
  std::string why;
};

// The GID to use on a port of `layer` with `table`: `requested` (HOOP_IB_GID_INDEX) when given
// and present, else the default above.
GidChoice chooseGid(const std::vector<GidEntry>& table, LinkLayer layer,
                    std::optional<int> requested);

}  // namespace hoop
