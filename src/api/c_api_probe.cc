// hoopCommProbeLink: one link's measurement (algorithms/link_probe.h) through the C API. The
// arguments are checked before any rank waits on another, so a wrong one leaves the communicator
// usable; the probe itself is an operation like a send, whose failure fails the communicator.
#include <memory>

#include "algorithms/link_probe.h"
#include "api/c_api_submit.h"

using namespace hoop;
using namespace hoop::capi;

namespace {

constexpr const char* kCall = "hoopCommProbeLink";

void copyOut(const LinkProbe& probe, hoopLinkProbe_t* result) {
  result->sendGBps = probe.sendGBps();
  result->recvGBps = probe.recvGBps();
  result->bidirectionalGBps = probe.bidirectionalGBps;
  result->latencyP50Us = probe.latencyP50Us;
  result->latencyP99Us = probe.latencyP99Us;
  result->dataOk = probe.received.ok ? 1 : 0;
  result->firstBadMessage = probe.received.message;
  result->firstBadOffset = probe.received.offset;
  result->expectedByte = probe.received.expected;
  result->actualByte = probe.received.actual;
}

}  // namespace

HOOP_API hoopResult_t hoopCommProbeLink(hoopComm_t comm, int peer, size_t bytes, int iters,
                                        hoopLinkProbe_t* result) {
  const hoopResult_t status = guarded(comm, [&] {
    usableComm(comm, kCall);
    const int rank = comm->impl->rank();
    if (inGroup()) {
      fail(hoopInvalidUsage, kCall, ": rank ", rank,
           ": not inside hoopGroupStart/hoopGroupEnd (a probe times its own sends and receives)");
    }
    if (result == nullptr) fail(hoopInvalidArgument, kCall, ": rank ", rank, ": result is NULL");
    if (peer < 0 || peer >= comm->impl->size() || peer == rank) {
      fail(hoopInvalidArgument, kCall, ": rank ", rank, ": peer ", peer,
           " is not another rank of the communicator (", comm->impl->size(), " ranks)");
    }
    if (bytes == 0 || iters < 1) {
      fail(hoopInvalidArgument, kCall, ": rank ", rank, ": bytes ", bytes, " and iters ", iters,
           " (a probe needs at least one byte and one iteration)");
    }
  });
  if (status != hoopSuccess) return status;
  auto options = std::make_shared<LinkProbeOptions>();
  options->messageBytes = bytes;
  options->messages = iters;
  options->latencyRoundTrips = iters;
  auto probe = [comm, peer, options, result] {
    runOn(comm, [&](Communicator& communicator) {
      // Both ranks count their calls with each other alike, so they derive the same pattern.
      options->patternSeed = comm->probesWithPeer[peer]++;
      copyOut(probeLink(communicator, peer, *options), result);
    });
  };
  if (comm->queue != nullptr) return enqueue(comm, std::move(probe));
  return guarded(comm, probe);
}
