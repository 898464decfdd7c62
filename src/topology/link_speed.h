// NIC link speeds from Linux sysfs. hwloc does not record them, and only the live machine has a
// /sys to read: topologies loaded from XML carry their speeds in the file instead.
#pragma once

#include <cstdint>
#include <string>

namespace hoop {

// /sys/class/net/NAME/speed, in Mb/s; 0 when unknown (link down, virtual device, no file).
uint64_t networkLinkSpeedMbps(const std::string& interface, const std::string& sysRoot = "/sys");

// The fastest port of an RDMA device, from /sys/class/infiniband/NAME/ports/*/rate ("200 Gb/sec
// (4X HDR)"), in Mb/s; 0 when unknown.
uint64_t rdmaLinkSpeedMbps(const std::string& device, const std::string& sysRoot = "/sys");

// "200 Gb/sec (4X HDR)" -> 200000, "2.5 Gb/sec (1X SDR)" -> 2500; 0 for anything else.
uint64_t parseRdmaRateMbps(const std::string& rate);

}  // namespace hoop
