// Finding the RDMA ports this rank may use: the devices sysfs lists, those HOOP_IB_HCA allows,
// their active ports, and on each the GID to use (gid_table.h). Needs no verbs call, so the
// summary every rank brings to the rendezvous costs a few file reads; libibverbs is loaded only
// where a device exists, to check that it can be.
#pragma once

#include <string>
#include <vector>

#include "transport/rdma/gid_table.h"
#include "transport/rdma/rdma_options.h"
#include "transport/rdma/rdma_reach.h"

namespace hoop {

struct RdmaPort {
  std::string device;
  int port = 0;
  LinkLayer linkLayer = LinkLayer::kUnknown;
  GidChoice gid;
  uint16_t lid = 0;
};

struct RdmaDiscovery {
  RdmaReach reach;
  // Usable ports of the same link layer and GID type as the first, in the order found: the
  // rails a connection spreads its queue pairs over.
  std::vector<RdmaPort> ports;
  // What was found and why ports were passed over, for the INFO log and errors.
  std::string detail;
};

// Looks at options.sysfsRoot. `libraryLoads` answers whether libibverbs can be loaded (and why
// not); tests pass their own.
RdmaDiscovery discoverRdma(const RdmaOptions& options, bool (*libraryLoads)(std::string* why));
// With the real library check.
RdmaDiscovery discoverRdma(const RdmaOptions& options);

}  // namespace hoop
