// Fuzzes what a rank reads about a peer's RDMA: the setup message it receives over the pair's
// link before connecting queue pairs (first byte 0), the RDMA summary in the rendezvous table
// (first byte 1), and HOOP_IB_HCA's text (first byte 2). A message that decodes must encode back
// to the same bytes; anything else must be a hoop::Error, never a crash or a wild read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/wire.h"
#include "transport/rdma/hca_filter.h"
#include "transport/rdma/rdma_reach.h"
#include "transport/rdma/rdma_setup_wire.h"

namespace hoop {
namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

void fuzzSetup(const uint8_t* data, size_t size) {
  RdmaSetupMessage message;
  try {
    message = decodeRdmaSetup(data, size);
  } catch (const Error&) {
    return;
  }
  if (!message.ok) return;  // a failure's fields after the text are not kept
  check(message.rails.size() >= 1 && message.rails.size() <= kRdmaMaxRails);
  for (const RdmaQueuePairInfo& qp : message.queuePairs) check(qp.rail < message.rails.size());
  const std::vector<uint8_t> again = encodeRdmaSetup(message);
  check(again == std::vector<uint8_t>(data, data + size));
}

void fuzzReach(const uint8_t* data, size_t size) {
  try {
    WireReader in(data, size, "fuzz");
    const RdmaReach reach = readRdmaReach(in);
    // Both orders of a pair reach the same decision.
    RdmaReach other;
    other.state = RdmaState::kUsable;
    other.linkLayer = LinkLayer::kEthernet;
    other.gidType = GidType::kRoceV2;
    check(rdmaWhyNot(reach, other, false, false, "x").empty() ==
          rdmaWhyNot(other, reach, false, false, "x").empty());
    (void)reach.describe();
  } catch (const Error&) {
  }
}

void fuzzHca(const uint8_t* data, size_t size) {
  try {
    const HcaFilter filter =
        HcaFilter::parse(std::string(reinterpret_cast<const char*>(data), size));
    (void)filter.allows("mlx5_0", 1);
  } catch (const Error&) {
  }
}

}  // namespace
}  // namespace hoop

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 3) {
    case 0: hoop::fuzzSetup(data + 1, size - 1); break;
    case 1: hoop::fuzzReach(data + 1, size - 1); break;
    default: hoop::fuzzHca(data + 1, size - 1); break;
  }
  return 0;
}
