#include "train/response_executor.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "hoop/hoop.hpp"
#include "train/scaling.h"

namespace hoop::train {

ResponseExecutor::ResponseExecutor(hoopComm_t comm, int rank, int nranks,
                                   size_t fusionThresholdBytes)
    : comm_(comm), rank_(rank), nranks_(nranks), fusionThresholdBytes_(fusionThresholdBytes) {}

void ResponseExecutor::run(const std::vector<Response>& responses, const FindRequest& find,
                           const Finish& finish, ExecutionCounters& counters) {
  // Buckets stay open across the cycle's other responses; every rank sees the same responses in
  // the same order, so every rank packs and flushes the same buckets at the same points.
  std::vector<Bucket> open;
  for (const Response& response : responses) {
    LocalRequest* request = find(response.name);
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
  check(hoopAllReduce(fused, fused, bucket.bytes / elementBytes, bucket.key.type, bucket.key.op,
                      comm_, nullptr),
        "fused allreduce of " + std::to_string(bucket.members.size()) + " tensors starting with '" +
            bucket.members.front().first->name + "'");
  ++counters.collectiveCalls;
  counters.fusedTensors += bucket.members.size();

  offset = 0;
  for (const auto& [response, request] : bucket.members) {
    const size_t count = response->shape.count;
    if (request != nullptr) {
      scaledCopy(request->recv, fused + offset, count, bucket.key.type, bucket.key.postscale);
      finish(*request, hoopSuccess, "");
    }
    offset += count * elementBytes;
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
      if (std::string error = runAllGather(response, request); !error.empty()) {
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

  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  void* out = nullptr;
  try {
    out = request->allocate ? request->allocate(counts) : nullptr;
  } catch (const std::exception& e) {
    return "allgather of '" + response.name + "': the output allocator threw: " + e.what();
  }
  if (out == nullptr && total > 0) {
    return "allgather of '" + response.name + "': the output allocator returned no memory for " +
           std::to_string(total) + " elements";
  }
  auto* dst = static_cast<std::byte*>(out);
  for (size_t r = 0; r < ranks; ++r) {
    if (counts[r] == 0) continue;
    std::memcpy(dst, gathered + r * blockBytes, counts[r] * elementBytes);
    dst += counts[r] * elementBytes;
  }
  return "";
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
