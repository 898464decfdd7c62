// One-shot allreduce for small messages when every rank shares this host's memory: each rank
// writes its input once as an eager message to every peer (transport/capabilities.h), then reads
// all peers' inputs in place and reduces them itself. One handshake of a cache line or two per
// peer, no forwarding steps: the latency floor of shared memory. Every rank reduces the inputs in
// rank order (0 op 1 op 2 ...), so all ranks get bitwise-identical results whatever the arrival
// order.
#include <array>

#include "algorithms/collective.h"
#include "algorithms/rank_order_fold.h"
#include "algorithms/team.h"
#include "base/error.h"
#include "device/executor.h"
#include "transport/capabilities.h"

namespace hoop {

bool oneShotFits(const Team& comm, const CollectiveArgs& args) {
  return comm.everyPeerSharesMemory() && static_cast<size_t>(comm.size()) <= kOneShotMaxRanks &&
         args.bytes() <= kOneShotMaxBytes;
}

namespace {

// The eager path to `peer`. Every shared-memory connection offers one of at least
// kOneShotMaxBytes (tested with the transport), so only a broken promise ends here.
EagerMessages& eagerTo(Team& comm, int peer, size_t bytes) {
  EagerMessages* eager = comm.connection(peer).eagerMessages();
  if (eager == nullptr || eager->eagerMaxBytes() < bytes) {
    fail(hoopInternalError, "the one-shot allreduce of ", bytes, " bytes needs eager messages to ",
         comm.describePeer(peer), ", whose connection ",
         eager == nullptr ? std::string("offers none") : str("carries ", eager->eagerMaxBytes()));
  }
  return *eager;
}

}  // namespace

void oneShotAllReduce(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const auto me = static_cast<size_t>(comm.rank());
  const EagerCall call{args.tag(), args.type, args.op, args.count, args.bytes()};
  std::array<EagerMessages*, kOneShotMaxRanks> peers{};
  for (size_t r = 0; r < n; ++r) {
    if (r != me) peers[r] = &eagerTo(comm, static_cast<int>(r), args.bytes());
  }

  // Send to everyone first: a peer's buffer is only busy if that peer is a call behind.
  std::array<bool, kOneShotMaxRanks> sent{};
  std::array<const void*, kOneShotMaxRanks> inputs{};
  sent[me] = true;
  inputs[me] = args.send;
  // In place, this rank's input would be overwritten before its turn in the order: keep a copy.
  if (foldOverwritesOwnInput(args, static_cast<int>(me)) && args.bytes() > 0) {
    Executor& executor = executorOf(args);
    char* copy = comm.staging(executor, args.bytes());
    executor.copy(copy, args.send, args.bytes());
    inputs[me] = copy;
  }
  std::array<bool, kOneShotMaxRanks> received{};
  received[me] = true;
  auto everythingMoved = [&] {
    bool done = true;
    for (size_t r = 0; r < n; ++r) {
      if (r == me) continue;
      if (!sent[r]) sent[r] = peers[r]->tryEagerSend(args.send, call);
      if (!received[r]) {
        inputs[r] = peers[r]->peekEager(call);
        received[r] = inputs[r] != nullptr;
      }
      done &= sent[r] && received[r];
    }
    return done;
  };
  if (!everythingMoved()) {
    comm.waitUntil(everythingMoved, [&] {
      std::string who;
      for (size_t r = 0; r < n; ++r) {
        if (!received[r] || !sent[r]) {
          who += (who.empty() ? "" : ", ") + comm.describePeer(static_cast<int>(r));
        }
      }
      return who;
    });
  }

  foldInRankOrder(args, n, [&](size_t r) { return inputs[r]; });
  for (size_t r = 0; r < n; ++r) {
    if (r == me) continue;
    peers[r]->releaseEager();
    // Only now the check for a peer that slept waiting for our message: by this time our stores
    // have long reached it, so the fence costs little (see EagerMessages::finishWakeUp).
    peers[r]->finishWakeUp();
  }
}

}  // namespace hoop
