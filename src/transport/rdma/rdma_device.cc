#include "transport/rdma/rdma_device.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "transport/rdma/verbs_library.h"

namespace hoop {
namespace {

std::string readFirstLine(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

// sysfs's "4: ACTIVE".
bool portActive(const std::filesystem::path& portDirectory) {
  return readFirstLine(portDirectory / "state").find("ACTIVE") != std::string::npos;
}

LinkLayer linkLayerOf(const std::filesystem::path& portDirectory) {
  const std::string text = readFirstLine(portDirectory / "link_layer");
  if (text == "InfiniBand") return LinkLayer::kInfiniBand;
  if (text == "Ethernet") return LinkLayer::kEthernet;
  return LinkLayer::kUnknown;
}

uint16_t lidOf(const std::filesystem::path& portDirectory) {
  const std::string text = readFirstLine(portDirectory / "lid");
  try {
    return static_cast<uint16_t>(std::stoul(text, nullptr, 16));
  } catch (const std::exception&) {
    return 0;
  }
}

std::vector<std::string> sortedEntries(const std::filesystem::path& directory) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

uint64_t subnetPrefixOf(const Gid& gid) {
  uint64_t prefix = 0;
  for (size_t i = 0; i < 8; ++i) prefix = prefix << 8 | gid[i];
  return prefix;
}

bool realLibraryLoads(std::string* why) {
#if defined(HOOP_HAVE_VERBS)
  return verbsLibrary(why) != nullptr;
#else
  *why = "this hoop was built without libibverbs' headers (libibverbs-dev)";
  return false;
#endif
}

}  // namespace

RdmaDiscovery discoverRdma(const RdmaOptions& options) {
  return discoverRdma(options, realLibraryLoads);
}

RdmaDiscovery discoverRdma(const RdmaOptions& options, bool (*libraryLoads)(std::string* why)) {
  RdmaDiscovery found;
  RdmaReach& reach = found.reach;
  const std::vector<std::string> devices = sortedEntries(options.sysfsRoot);
  if (devices.empty()) {
    reach.state = RdmaState::kNoDevice;
    found.detail = str("no RDMA device (", options.sysfsRoot, " lists none)");
    return found;
  }
  std::vector<std::string> notes;
  bool anyAllowed = false;
  bool anyActive = false;
  for (const std::string& device : devices) {
    const std::filesystem::path ports = std::filesystem::path(options.sysfsRoot) / device / "ports";
    for (const std::string& portName : sortedEntries(ports)) {
      int port = 0;
      try {
        port = std::stoi(portName);
      } catch (const std::exception&) {
        continue;
      }
      const std::string name = str(device, ":", port);
      if (!options.hca.allows(device, port)) {
        notes.push_back(str(name, " not allowed by HOOP_IB_HCA"));
        continue;
      }
      if (reach.device.empty()) reach.device = device;
      anyAllowed = true;
      const std::filesystem::path portDirectory = ports / portName;
      if (!portActive(portDirectory)) {
        notes.push_back(str(name, " not active"));
        continue;
      }
      anyActive = true;
      RdmaPort candidate;
      candidate.device = device;
      candidate.port = port;
      candidate.linkLayer = linkLayerOf(portDirectory);
      candidate.lid = lidOf(portDirectory);
      candidate.gid =
          chooseGid(readGidTable(portDirectory.string()), candidate.linkLayer, options.gidIndex);
      if (candidate.gid.index < 0) {
        notes.push_back(str(name, ": ", candidate.gid.why));
        if (reach.port == 0) {
          reach.device = device;
          reach.port = static_cast<uint8_t>(port);
        }
        continue;
      }
      if (!found.ports.empty() && (candidate.linkLayer != found.ports.front().linkLayer ||
                                   candidate.gid.type != found.ports.front().gid.type)) {
        notes.push_back(str(name, " is ", gidTypeName(candidate.gid.type), ", unlike ",
                            found.ports.front().device, ":", found.ports.front().port));
        continue;
      }
      found.ports.push_back(candidate);
    }
  }
  auto joined = [&] {
    std::string text;
    for (const std::string& note : notes) text += str(text.empty() ? "" : "; ", note);
    return text;
  };
  if (found.ports.empty()) {
    if (!anyAllowed) {
      reach.state = RdmaState::kNoDevice;
      reach.device.clear();
      found.detail = str("HOOP_IB_HCA='", options.hca.text(), "' allows none of the RDMA ports (",
                         joined(), ")");
    } else if (!anyActive) {
      reach.state = RdmaState::kPortDown;
      found.detail = str("no active RDMA port (", joined(), ")");
    } else {
      reach.state = RdmaState::kNoGid;
      found.detail = str("no usable GID (", joined(), ")");
    }
    return found;
  }
  std::string why;
  if (!libraryLoads(&why)) {
    reach.state = RdmaState::kNoLibrary;
    found.detail = str("RDMA devices, but libibverbs cannot be loaded: ", why);
    found.ports.clear();
    return found;
  }
  const RdmaPort& first = found.ports.front();
  reach.state = RdmaState::kUsable;
  reach.device = first.device;
  reach.port = static_cast<uint8_t>(first.port);
  reach.linkLayer = first.linkLayer;
  reach.gidType = first.gid.type;
  reach.subnetPrefix =
      first.linkLayer == LinkLayer::kInfiniBand ? subnetPrefixOf(first.gid.gid) : 0;
  std::string ports;
  for (const RdmaPort& port : found.ports) {
    ports += str(ports.empty() ? "" : ", ", port.device, ":", port.port, " GID ", port.gid.index,
                 " (", gidTypeName(port.gid.type), " ", gidText(port.gid.gid), ")");
  }
  found.detail = str("RDMA ports: ", ports, notes.empty() ? "" : "; passed over: ", joined());
  return found;
}

}  // namespace hoop
