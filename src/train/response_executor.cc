#include "train/response_executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <string>
#include <unordered_set>

#include "base/timeline.h"
#include "hoop/hoop.hpp"
#include "train/scaling.h"

namespace hoop::train {

namespace {

// The timeline's row for the fusion buffer's copies.
constexpr int kFusionLane = 5;

// One copy into or out of the fusion buffer, named after the bucket's first tensor.
void recordFusionCopy(const char* what, const std::string& firstName, size_t tensors, size_t bytes,
                      std::chrono::steady_clock::time_point began) {
  TimelineEvent event;
  event.name = firstName;
  event.category = std::string("engine.") + what;
  event.start = timelineWallStart(began);
  event.duration = std::chrono::steady_clock::now() - began;
  event.lane = kFusionLane;
  event.args.emplace_back("phase", what);
  event.args.emplace_back("tensors", std::to_string(tensors));
  event.args.emplace_back("bytes", std::to_string(bytes));
  timelineRecord(event);
}

}  // namespace

ResponseExecutor::ResponseExecutor(hoopComm_t comm, int rank, int nranks,
                                   size_t fusionThresholdBytes)
    : comm_(comm), rank_(rank), nranks_(nranks), fusionThresholdBytes_(fusionThresholdBytes) {}

void ResponseExecutor::run(const std::vector<Response>& responses, const FindRequest& find,
                           const Finish& finish, ExecutionCounters& counters) {
  // Buckets stay open across the cycle's other responses; every rank sees the same responses in
  // the same order, so every rank packs and flushes the same buckets at the same points.
  std::vector<Bucket> open;
  // A name can come twice in one cycle only in a corner of join (cached on one rank, by name on a
  // joined one); the second use takes part with scratch instead of reusing a finished request.
  std::unordered_set<std::string> claimed;
  for (const Response& response : responses) {
    LocalRequest* request = claimed.insert(response.name).second ? find(response.name) : nullptr;
    if (!response.error.empty()) {
      if (request != nullptr) finish(*request, response.errorCode, response.error);
      continue;
    }
    const RequestShape& shape = response.shape;
    const size_t bytes = shape.count * elementSize(shape.type);
    const bool fusible =
        shape.kind == RequestKind::kAllReduce && bytes > 0 && bytes <= fusionThresholdBytes_;
    if (!fusible) {
      runAlone(response, request, finish, counters);
      continue;
    }
    const FusionKey key{shape.type, shape.op, shape.prescale, shape.postscale};
    auto bucket =
        std::find_if(open.begin(), open.end(), [&](const Bucket& b) { return b.key == key; });
    if (bucket != open.end() && bucket->bytes + bytes > fusionThresholdBytes_) {
      runFused(*bucket, finish, counters);
      open.erase(bucket);
      bucket = open.end();
    }
    if (bucket == open.end()) {
      open.push_back(Bucket{key, {}, 0});
      bucket = open.end() - 1;
    }
    bucket->members.emplace_back(&response, request);
    bucket->bytes += bytes;
  }
  for (const Bucket& bucket : open) runFused(bucket, finish, counters);
}

void ResponseExecutor::runFused(const Bucket& bucket, const Finish& finish,
                                ExecutionCounters& counters) {
  if (bucket.members.size() == 1) {
    runAlone(*bucket.members.front().first, bucket.members.front().second, finish, counters);
    return;
  }
  const size_t elementBytes = elementSize(bucket.key.type);
  fusionBuffer_.resize(std::max(fusionBuffer_.size(), (bucket.bytes + 7) / 8));
  auto* fused = reinterpret_cast<std::byte*>(fusionBuffer_.data());
  const std::string& firstName = bucket.members.front().first->name;
  const bool timeline = timelineOn();
  auto began = std::chrono::steady_clock::now();

  size_t offset = 0;
  for (const auto& [response, request] : bucket.members) {
    const size_t count = response->shape.count;
    if (request != nullptr) {
      scaledCopy(fused + offset, request->send, count, bucket.key.type, bucket.key.prescale);
    } else {
      std::memset(fused + offset, 0, count * elementBytes);  // a joined rank adds nothing
    }
    offset += count * elementBytes;
  }
  if (timeline) {
    recordFusionCopy("fusion copy in", firstName, bucket.members.size(), bucket.bytes, began);
  }
  check(hoopAllReduce(fused, fused, bucket.bytes / elementBytes, bucket.key.type, bucket.key.op,
                      comm_, nullptr),
        "fused allreduce of " + std::to_string(bucket.members.size()) + " tensors starting with '" +
            firstName + "'");
  ++counters.collectiveCalls;
  counters.fusedTensors += bucket.members.size();
  counters.largestFusedBytes = std::max(counters.largestFusedBytes, bucket.bytes);

  began = std::chrono::steady_clock::now();
  offset = 0;
  for (const auto& [response, request] : bucket.members) {
    const size_t count = response->shape.count;
    if (request != nullptr) {
      scaledCopy(request->recv, fused + offset, count, bucket.key.type, bucket.key.postscale);
    }
    offset += count * elementBytes;
  }
  if (timeline) {
    recordFusionCopy("fusion copy out", firstName, bucket.members.size(), bucket.bytes, began);
  }
  for (const auto& [response, request] : bucket.members) {
    if (request != nullptr) finish(*request, hoopSuccess, "");
  }
}

void ResponseExecutor::runAlone(const Response& response, LocalRequest* request,
                                const Finish& finish, ExecutionCounters& counters) {
  const RequestShape& shape = response.shape;
  const size_t elementBytes = elementSize(shape.type);
  const std::string what = std::string(kindName(shape.kind)) + " of '" + response.name + "'";
  const void* send = request != nullptr ? request->send : nullptr;
  void* recv = request != nullptr ? request->recv : nullptr;
  if (request == nullptr) {
    send = scratch(inputElements(shape, nranks_) * elementBytes, 0);
    recv = scratch(outputElements(shape, nranks_) * elementBytes, 1);
  }
  bool issued = true;
  switch (shape.kind) {
    case RequestKind::kAllReduce:
      issued = shape.count > 0;
      if (!issued) break;
      if (shape.prescale != 1.0) {
        scaledCopy(recv, send, shape.count, shape.type, shape.prescale);
        send = recv;
      }
      check(hoopAllReduce(send, recv, shape.count, shape.type, shape.op, comm_, nullptr), what);
      scaledCopy(recv, recv, shape.count, shape.type, shape.postscale);
      break;
    case RequestKind::kBroadcast:
      if (request == nullptr) recv = scratch(shape.count * elementBytes, 1);
      check(hoopBroadcast(recv, recv, shape.count, shape.type, shape.root, comm_, nullptr), what);
      break;
    case RequestKind::kAllGather:
    case RequestKind::kAllToAllv:
      if (std::string error = shape.kind == RequestKind::kAllGather
                                  ? runAllGather(response, request)
                                  : runAllToAllv(response, request);
          !error.empty()) {
        ++counters.collectiveCalls;
        finish(*request, hoopInvalidArgument, error);
        return;
      }
      break;
    case RequestKind::kAllToAll:
      check(hoopAllToAll(send, recv, shape.count, shape.type, comm_, nullptr), what);
      break;
    case RequestKind::kReduceScatter:
      check(hoopReduceScatter(send, recv, shape.count, shape.type, shape.op, comm_, nullptr), what);
      break;
    case RequestKind::kBarrier:
      issued = false;  // agreeing on the name already proved every rank reached it
      break;
  }
  if (issued) ++counters.collectiveCalls;
  if (request != nullptr) finish(*request, hoopSuccess, "");
}

std::string ResponseExecutor::runAllGather(const Response& response, LocalRequest* request) {
  // hoopAllGather moves equal blocks: pad every rank's block to the largest, then compact.
  const std::vector<size_t>& counts = response.perRankCounts;
  const size_t elementBytes = elementSize(response.shape.type);
  const size_t blockBytes = *std::max_element(counts.begin(), counts.end()) * elementBytes;
  const size_t ranks = static_cast<size_t>(nranks_);
  const size_t self = static_cast<size_t>(rank_);
  fusionBuffer_.resize(std::max(fusionBuffer_.size(), (blockBytes * ranks + 7) / 8));
  auto* gathered = reinterpret_cast<std::byte*>(fusionBuffer_.data());
  if (request != nullptr && counts[self] > 0) {
    std::memcpy(gathered + self * blockBytes, request->send, counts[self] * elementBytes);
  }
  if (blockBytes > 0) {
    check(hoopAllGather(gathered + self * blockBytes, gathered, blockBytes / elementBytes,
                        response.shape.type, comm_, nullptr),
          "allgather of '" + response.name + "'");
  }
  if (request == nullptr) return "";

  void* out = nullptr;
  if (std::string error = allocateOutput(response, *request, counts, out); !error.empty()) {
    return error;
  }
  auto* dst = static_cast<std::byte*>(out);
  for (size_t r = 0; r < ranks; ++r) {
    if (counts[r] == 0) continue;
    std::memcpy(dst, gathered + r * blockBytes, counts[r] * elementBytes);
    dst += counts[r] * elementBytes;
  }
  return "";
}

std::string ResponseExecutor::allocateOutput(const Response& response, LocalRequest& request,
                                             const std::vector<size_t>& counts, void*& out) {
  const std::string what = std::string(kindName(response.shape.kind)) + " of '" + response.name;
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  try {
    out = request.allocate ? request.allocate(counts) : nullptr;
  } catch (const std::exception& e) {
    return what + "': the output allocator threw: " + e.what();
  }
  if (out == nullptr && total > 0) {
    return what + "': the output allocator returned no memory for " + std::to_string(total) +
           " elements";
  }
  return "";
}

std::string ResponseExecutor::runAllToAllv(const Response& response, LocalRequest* request) {
  const size_t ranks = static_cast<size_t>(nranks_);
  const size_t self = static_cast<size_t>(rank_);
  const hoopDataType_t type = response.shape.type;
  const size_t elementBytes = elementSize(type);
  const std::string what = "alltoallv of '" + response.name + "'";

  // Each rank learns how much every other rank sends it; a joined rank sends nothing.
  std::vector<uint64_t> sendCounts(ranks, 0);
  std::vector<uint64_t> recvCounts(ranks, 0);
  if (request != nullptr) {
    std::copy(request->sendCounts.begin(), request->sendCounts.end(), sendCounts.begin());
  }
  check(hoopAllToAll(sendCounts.data(), recvCounts.data(), 1, hoopUint64, comm_, nullptr),
        what + " (count exchange)");
  const std::vector<size_t> received(recvCounts.begin(), recvCounts.end());
  const size_t totalReceived = std::accumulate(received.begin(), received.end(), size_t{0});

  // The data must be received even when this rank cannot keep it (its allocator failed).
  std::string error;
  void* out = nullptr;
  if (request != nullptr) error = allocateOutput(response, *request, received, out);
  if (out == nullptr) out = scratch(totalReceived * elementBytes, 1);
  const auto* send = static_cast<const std::byte*>(request != nullptr ? request->send : nullptr);
  auto* recv = static_cast<std::byte*>(out);

  std::vector<size_t> sendOffsets(ranks), recvOffsets(ranks);
  for (size_t r = 1; r < ranks; ++r) {
    sendOffsets[r] = sendOffsets[r - 1] + sendCounts[r - 1] * elementBytes;
    recvOffsets[r] = recvOffsets[r - 1] + received[r - 1] * elementBytes;
  }
  if (sendCounts[self] > 0) {
    std::memcpy(recv + recvOffsets[self], send + sendOffsets[self],
                sendCounts[self] * elementBytes);
  }
  check(hoopGroupStart(), what);
  hoopResult_t posted = hoopSuccess;
  for (size_t r = 0; r < ranks && posted == hoopSuccess; ++r) {
    if (r == self) continue;
    const int peer = static_cast<int>(r);
    if (sendCounts[r] > 0) {
      posted = hoopSend(send + sendOffsets[r], sendCounts[r], type, peer, comm_, nullptr);
    }
    if (posted == hoopSuccess && received[r] > 0) {
      posted = hoopRecv(recv + recvOffsets[r], received[r], type, peer, comm_, nullptr);
    }
  }
  const hoopResult_t completed = hoopGroupEnd();
  check(posted != hoopSuccess ? posted : completed, what);
  return error;
}

void* ResponseExecutor::scratch(size_t bytes, int which) {
  auto& buffer = scratch_[which];
  const size_t words = (bytes + 7) / 8;
  if (buffer.size() < words) buffer.resize(words);
  std::fill(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(words), 0);
  return buffer.data();
}

void ResponseExecutor::check(hoopResult_t result, const std::string& what) const {
  if (result == hoopSuccess) return;
  throw Exception(result, "rank " + std::to_string(rank_) + ": " + what +
                              " failed: " + hoopGetLastError(comm_));
}

}  // namespace hoop::train
