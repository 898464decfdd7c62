#include "transport/rdma/rdma_setup.h"

#include "base/error.h"

#if !defined(HOOP_HAVE_VERBS)

namespace hoop {

std::unique_ptr<Connection> connectRdma(const RdmaConnectRequest& request, SetupChannel&) {
  fail(hoopSystemError, "rank ", request.selfRank, ": rdma to ", request.peer,
       ": this hoop was built without libibverbs' headers (libibverbs-dev)");
}

}  // namespace hoop

#else

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/logging.h"
#include "base/secret.h"
#include "base/wire.h"
#include "transport/rdma/rdma_connection.h"
#include "transport/rdma/rdma_device.h"

namespace hoop {
namespace {

void sendFramed(SetupChannel& channel, const std::vector<uint8_t>& body) {
  WireWriter length;
  length.u32(static_cast<uint32_t>(body.size()));
  channel.send(length.bytes().data(), length.bytes().size());
  if (!body.empty()) channel.send(body.data(), body.size());
}

std::vector<uint8_t> recvFramed(SetupChannel& channel) {
  uint8_t prefix[4];
  channel.recv(prefix, sizeof(prefix));
  const uint32_t length = WireReader(prefix, sizeof(prefix), "rdma setup message").u32();
  if (length > kRdmaMaxSetupMessage) {
    fail(hoopRemoteError, "rdma setup message of ", length, " bytes (at most ",
         kRdmaMaxSetupMessage, ")");
  }
  std::vector<uint8_t> body(length);
  if (length > 0) channel.recv(body.data(), length);
  return body;
}

// Tells the peer why we stop, so it fails too instead of waiting on the channel. Best effort: the
// error about to be thrown matters more than a failure to report it.
void sendFailure(SetupChannel& channel, const std::string& why) {
  try {
    RdmaSetupMessage failure;
    failure.ok = false;
    failure.error = why;
    sendFramed(channel, encodeRdmaSetup(failure));
  } catch (const Error&) {
  }
}

uint32_t randomPsn() {
  const Secret random = Secret::random();
  uint32_t psn = 0;
  std::memcpy(&psn, random.bytes.data(), sizeof(psn));
  return psn & 0xffffff;
}

int mtuBytes(int mtu) { return 128 << mtu; }  // IBV_MTU_256 is 1

// Local resources, made before anything is told to the peer.
struct Local {
  RdmaEndpoint endpoint;
  std::vector<uint32_t> psns;
  std::string railsText;
};

Local buildLocal(const RdmaConnectRequest& request) {
  const RdmaOptions& options = request.options;
  const RdmaDiscovery discovery = discoverRdma(options);
  if (discovery.ports.empty()) fail(hoopSystemError, discovery.detail);
  Local local;
  RdmaEndpoint& ep = local.endpoint;
  ep.selfRank = request.selfRank;
  ep.peer = request.peer;
  ep.registry = request.registry;
  ep.probeInterval = options.probeInterval;
  ep.layout = RdmaLayout(options.slots, (options.slotBytes + 63) / 64 * 64);
  const size_t blockBytes = ep.layout.totalBytes();
  void* block =
      mmap(nullptr, blockBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) {
    fail(hoopSystemError, "mmap of ", blockBytes, " bytes for RDMA slots: ", errnoText(errno));
  }
  ep.memory = Mapping(block, blockBytes);

  const size_t railCount = std::min(discovery.ports.size(), kRdmaMaxRails);
  const size_t queuePairs = std::clamp<size_t>(options.queuePairs, 1, kRdmaMaxQueuePairs);
  for (size_t r = 0; r < railCount; ++r) {
    const RdmaPort& port = discovery.ports[r];
    auto rail = std::make_unique<RdmaRail>();
    rail->device = VerbsDevice::open(port.device);
    ibv_port_attr attributes{};
    if (rail->device->verbs().queryPort(rail->device->context(), static_cast<uint8_t>(port.port),
                                        &attributes) != 0) {
      fail(hoopSystemError, "ibv_query_port(", port.device, ":", port.port,
           "): ", errnoText(errno));
    }
    if (attributes.state != IBV_PORT_ACTIVE) {
      fail(hoopSystemError, port.device, ":", port.port, " is not active");
    }
    rail->activeMtu = attributes.active_mtu;
    rail->maxMessageBytes = attributes.max_msg_sz > 0 ? attributes.max_msg_sz : (1u << 30);
    rail->local.gid = port.gid.gid;
    rail->local.lid = attributes.lid;
    rail->local.port = static_cast<uint8_t>(port.port);
    rail->local.mtu = static_cast<uint8_t>(attributes.active_mtu);
    rail->local.linkLayer = port.linkLayer;
    rail->local.gidIndex = static_cast<uint8_t>(port.gid.index);
    rail->channel = makeCompletionChannel(*rail->device);
    rail->memory = registerMemory(*rail->device, block, blockBytes,
                                  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    rail->local.memoryAddress = reinterpret_cast<uintptr_t>(block);
    rail->local.memoryKey = rail->memory->rkey;
    local.railsText += str(local.railsText.empty() ? "" : ", ", port.device, ":", port.port,
                           " GID ", port.gid.index, " ", gidTypeName(port.gid.type), " MTU ",
                           mtuBytes(attributes.active_mtu));
    ep.rails.push_back(std::move(rail));
  }

  // Enough requests for every slot in flight both ways, the credits and answers that come
  // with them, and the probes; the device may allow fewer.
  const uint32_t wanted = static_cast<uint32_t>(2 * options.slots + 64);
  for (size_t r = 0; r < railCount; ++r) {
    RdmaRail& rail = *ep.rails[r];
    const ibv_device_attr& device = rail.device->attributes();
    const uint32_t depth = std::min<uint32_t>(wanted, static_cast<uint32_t>(device.max_qp_wr));
    size_t onRail = 0;
    for (size_t q = r; q < queuePairs; q += railCount) ++onRail;
    const int entries = std::min(device.max_cqe, static_cast<int>(onRail * 2 * depth));
    rail.cq = makeCompletionQueue(*rail.device, entries, rail.channel.get());
  }
  for (size_t q = 0; q < queuePairs; ++q) {
    const size_t r = q % railCount;
    RdmaRail& rail = *ep.rails[r];
    const ibv_device_attr& device = rail.device->attributes();
    const uint32_t depth = std::min<uint32_t>(wanted, static_cast<uint32_t>(device.max_qp_wr));
    RdmaQueuePairState pair;
    // As much inline data as the provider takes, for small messages (a header plus some bytes).
    for (const uint32_t inlineBytes : {256u, 128u, 64u, 0u}) {
      ibv_qp_init_attr init{};
      init.send_cq = rail.cq.get();
      init.recv_cq = rail.cq.get();
      init.qp_type = IBV_QPT_RC;
      init.cap.max_send_wr = depth;
      init.cap.max_recv_wr = depth;
      init.cap.max_send_sge = 2;
      init.cap.max_recv_sge = 1;
      init.cap.max_inline_data = inlineBytes;
      try {
        pair.qp = makeQueuePair(*rail.device, init);
      } catch (const Error&) {
        if (inlineBytes == 0) throw;
        continue;
      }
      pair.maxInline = init.cap.max_inline_data;
      pair.sendDepth = std::min(depth, init.cap.max_send_wr);
      pair.recvDepth = std::min(depth, init.cap.max_recv_wr);
      break;
    }
    pair.rail = r;
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = rail.local.port;
    attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    if (const int error = rail.device->verbs().modifyQp(
            pair.qp.get(), &attr,
            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        error != 0) {
      fail(hoopSystemError, "queue pair to INIT on ", rail.device->name(), ": ", errnoText(error));
    }
    local.psns.push_back(randomPsn());
    ep.queuePairs.push_back(std::move(pair));
  }
  return local;
}

RdmaSetupMessage describe(const RdmaConnectRequest& request, const Local& local) {
  RdmaSetupMessage message;
  message.jobTag = request.jobTag;
  message.fromRank = static_cast<uint32_t>(request.selfRank);
  message.toRank = static_cast<uint32_t>(request.peerRank);
  message.slots = static_cast<uint32_t>(local.endpoint.layout.slots());
  message.slotBytes = local.endpoint.layout.slotBytes();
  for (const auto& rail : local.endpoint.rails) message.rails.push_back(rail->local);
  for (size_t q = 0; q < local.endpoint.queuePairs.size(); ++q) {
    const RdmaQueuePairState& pair = local.endpoint.queuePairs[q];
    message.queuePairs.push_back({static_cast<uint8_t>(pair.rail), pair.qp->qp_num, local.psns[q]});
  }
  return message;
}

// Both queue pairs of a partnership to ready-to-send.
void connectQueuePair(RdmaQueuePairState& pair, RdmaRail& rail, uint32_t psn,
                      const RdmaQueuePairInfo& remote, const RdmaRailInfo& remoteRail,
                      const RdmaOptions& options) {
  const VerbsLibrary& verbs = rail.device->verbs();
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(std::min<int>(rail.activeMtu, remoteRail.mtu));
  attr.dest_qp_num = remote.number;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.port_num = rail.local.port;
  attr.ah_attr.sl = 0;
  const bool otherSubnet =
      !std::equal(rail.local.gid.begin(), rail.local.gid.begin() + 8, remoteRail.gid.begin());
  if (rail.local.linkLayer == LinkLayer::kInfiniBand) attr.ah_attr.dlid = remoteRail.lid;
  if (rail.local.linkLayer == LinkLayer::kEthernet || otherSubnet) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, remoteRail.gid.data(), remoteRail.gid.size());
    attr.ah_attr.grh.sgid_index = rail.local.gidIndex;
    attr.ah_attr.grh.hop_limit = 64;
  }
  if (const int error =
          verbs.modifyQp(pair.qp.get(), &attr,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                             IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      error != 0) {
    fail(hoopSystemError, "queue pair to ready-to-receive on ", rail.device->name(), ":",
         static_cast<int>(rail.local.port), " towards GID ", gidText(remoteRail.gid), ": ",
         errnoText(error));
  }
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = psn;
  attr.timeout = static_cast<uint8_t>(options.timeout);
  attr.retry_cnt = static_cast<uint8_t>(options.retryCount);
  attr.rnr_retry = 7;  // receives are reposted as they are used: wait as long as it takes
  attr.max_rd_atomic = 1;
  if (const int error =
          verbs.modifyQp(pair.qp.get(), &attr,
                         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                             IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
      error != 0) {
    fail(hoopSystemError, "queue pair to ready-to-send on ", rail.device->name(), ": ",
         errnoText(error));
  }
}

std::vector<uint8_t> encodeReady(const std::string& error) {
  WireWriter out;
  out.u8(error.empty() ? 1 : 0);
  const size_t bytes = std::min<size_t>(error.size(), 4096);
  out.u16(static_cast<uint16_t>(bytes));
  out.raw(error.data(), bytes);
  return out.bytes();
}

// The peer's confirmation: empty when it is ready, else its reason.
std::string decodeReady(const std::vector<uint8_t>& bytes) {
  WireReader in(bytes.data(), bytes.size(), "rdma ready message");
  const bool ok = in.u8() != 0;
  const uint16_t length = in.u16();
  if (length > in.remaining()) fail(hoopRemoteError, "malformed rdma ready message");
  std::string error(length, '\0');
  in.raw(error.data(), length);
  if (!ok && error.empty()) error = "it failed";
  return ok ? std::string() : error;
}

std::string kibibytes(size_t bytes) {
  return bytes % 1024 == 0 ? str(bytes / 1024, " KiB") : str(bytes, " B");
}

}  // namespace

std::unique_ptr<Connection> connectRdma(const RdmaConnectRequest& request, SetupChannel& channel) {
  if (request.selfRank == request.peerRank) {
    fail(hoopInvalidArgument, "rank ", request.selfRank, ": rdma with itself");
  }
  const std::string context =
      str("rank ", request.selfRank, ": setting up rdma with ", request.peer, ": ");
  const bool first = request.selfRank < request.peerRank;
  Local local;
  RdmaSetupMessage mine;
  try {
    local = buildLocal(request);
    mine = describe(request, local);
  } catch (const Error& e) {
    sendFailure(channel, e.what());
    fail(e.code(), context, e.what());
  }
  RdmaSetupMessage theirs;
  auto receive = [&] {
    const std::vector<uint8_t> body = recvFramed(channel);
    theirs = decodeRdmaSetup(body.data(), body.size());
  };
  if (first) {
    sendFramed(channel, encodeRdmaSetup(mine));
    receive();
  } else {
    receive();
    if (theirs.ok) sendFramed(channel, encodeRdmaSetup(mine));
  }
  if (!theirs.ok) {
    fail(hoopRemoteError, context, request.peer, " failed: ", theirs.error);
  }
  RdmaEndpoint& ep = local.endpoint;
  std::string problem;
  try {
    if (theirs.jobTag != request.jobTag ||
        theirs.fromRank != static_cast<uint32_t>(request.peerRank) ||
        theirs.toRank != static_cast<uint32_t>(request.selfRank)) {
      fail(hoopRemoteError, "its setup message names another job or other ranks (rank ",
           theirs.fromRank, " to rank ", theirs.toRank, ")");
    }
    if (theirs.rails.front().linkLayer != ep.rails.front()->local.linkLayer) {
      fail(hoopRemoteError, "its ports are ", linkLayerName(theirs.rails.front().linkLayer),
           ", these are ", linkLayerName(ep.rails.front()->local.linkLayer));
    }
    ep.remoteLayout = RdmaLayout(theirs.slots, theirs.slotBytes);
    ep.remoteRails = theirs.rails;
    // Both keep the first min(ours, theirs) queue pairs, so the pairs match one to one.
    const size_t count = std::min(ep.queuePairs.size(), theirs.queuePairs.size());
    ep.queuePairs.resize(count);
    for (size_t q = 0; q < count; ++q) {
      RdmaQueuePairState& pair = ep.queuePairs[q];
      const RdmaQueuePairInfo& remote = theirs.queuePairs[q];
      pair.remoteRail = remote.rail;
      // Receives first: the peer may write as soon as it sees us ready.
      postImmediateReceives(pair.qp.get(), q, pair.recvDepth, context);
      connectQueuePair(pair, *ep.rails[pair.rail], local.psns[q], remote, theirs.rails[remote.rail],
                       request.options);
    }
  } catch (const Error& e) {
    problem = e.what();
  }
  // Each side writes only once it knows the other is ready to receive.
  sendFramed(channel, encodeReady(problem));
  const std::string peerProblem = decodeReady(recvFramed(channel));
  if (!problem.empty()) fail(hoopSystemError, context, problem);
  if (!peerProblem.empty()) {
    fail(hoopRemoteError, context, request.peer, " failed: ", peerProblem);
  }
  const size_t queuePairs = ep.queuePairs.size();
  const size_t slots = ep.layout.slots();
  const size_t slotBytes = ep.layout.slotBytes();
  const uint32_t maxInline = ep.queuePairs.front().maxInline;
  if (request.link != nullptr) ep.link = std::move(*request.link);
  auto connection = std::make_unique<RdmaConnection>(std::move(ep));
  const std::string summary =
      str(queuePairs, " queue pair(s) on ", local.railsText, "; ", slots, " slots x ",
          kibibytes(slotBytes), " inbound; inline up to ", maxInline, " B");
  // Same shape as the tcp and shm lines ("connected to X at WHERE over T"), so logs read alike.
  if (first) {
    log(LogLevel::kInfo, LogSubsys::kNet, request.selfRank, "connected to ", request.peer, " at ",
        gidText(theirs.rails.front().gid), " over rdma (", summary, ")");
  } else {
    log(LogLevel::kInfo, LogSubsys::kNet, request.selfRank, "accepted ", request.peer,
        " over rdma (", summary, ")");
  }
  return connection;
}

}  // namespace hoop

#endif  // HOOP_HAVE_VERBS
