#include "transport/shm/shm_transport.h"

#include "base/logging.h"
#include "transport/shm/shm_setup.h"

namespace hoop {

std::string ShmTransport::whyNot(const PeerPair& pair) const {
  return pair.sameHost ? std::string() : "shm works only between ranks on the same host";
}

std::unique_ptr<Connection> ShmTransport::connect(const PeerPair& pair,
                                                  std::unique_ptr<Connection>& /*link*/,
                                                  SetupChannel& setup,
                                                  const TransportSettings& settings) {
  auto shm = connectShm(pair.self, pair.peer, pair.peerName, setup, settings.shm);
  // Same shape as the tcp lines ("connected to X at WHERE over T"), so logs read alike.
  const char* path = shm->sendsViaCma() ? "single-copy reads for large messages" : "slot copies";
  if (pair.self < pair.peer) {
    log(LogLevel::kInfo, LogSubsys::kNet, pair.self, "connected to ", pair.peerName, " at ",
        shm->segmentName(), " over shm (", path, ")");
  } else {
    log(LogLevel::kInfo, LogSubsys::kNet, pair.self, "accepted ", pair.peerName, " over shm (",
        path, ")");
  }
  return shm;
}

}  // namespace hoop
