// Engine: the submission side that user threads call (validation, handles, the queue the engine
// thread adopts each cycle), and the public methods.
#include <numeric>

#include "base/error.h"
#include "train/engine_impl.h"

namespace hoop::train {

void Engine::Impl::checkOptionsAgree() const {
  const uint64_t mine[2] = {options.fusionThresholdBytes, options.cacheCapacity};
  std::vector<uint64_t> all(2 * static_cast<size_t>(nranks));
  check(hoopAllGather(mine, all.data(), 2, hoopUint64, comm, nullptr), comm);
  std::string differences;
  for (size_t r = 1; r < static_cast<size_t>(nranks); ++r) {
    if (all[2 * r] == all[0] && all[2 * r + 1] == all[1]) continue;
    differences += "; rank " + std::to_string(r) +
                   " has HOOP_FUSION_THRESHOLD=" + std::to_string(all[2 * r]) +
                   ", HOOP_CACHE_CAPACITY=" + std::to_string(all[2 * r + 1]);
  }
  if (!differences.empty()) {
    throw Exception(hoopInvalidUsage,
                    prefix() + "training engine options differ between ranks: rank 0 has " +
                        "HOOP_FUSION_THRESHOLD=" + std::to_string(all[0]) +
                        ", HOOP_CACHE_CAPACITY=" + std::to_string(all[1]) + differences);
  }
}

void Engine::Impl::validate(const LocalRequest& request) const {
  const RequestShape& shape = request.shape;
  auto reject = [&](const std::string& why) {
    throw Exception(hoopInvalidArgument,
                    prefix() + kindName(shape.kind) + " of tensor '" + request.name + "': " + why);
  };
  if (shape.kind == RequestKind::kBarrier) return;
  if (!knownType(shape.type)) reject("unknown data type " + std::to_string(shape.type));
  if ((shape.kind == RequestKind::kAllReduce || shape.kind == RequestKind::kReduceScatter) &&
      !knownOp(shape.op)) {
    reject("unknown reduction " + std::to_string(shape.op));
  }
  if ((shape.prescale != 1.0 || shape.postscale != 1.0) && !isFloatingPoint(shape.type)) {
    reject(str("scale factors need a floating-point type, not ", typeName(shape.type)));
  }
  if (shape.kind == RequestKind::kBroadcast && (shape.root < 0 || shape.root >= nranks)) {
    reject("root " + std::to_string(shape.root) + " is outside 0.." + std::to_string(nranks - 1));
  }
  if (shape.kind == RequestKind::kAllToAllv &&
      request.sendCounts.size() != static_cast<size_t>(nranks)) {
    reject(std::to_string(request.sendCounts.size()) + " send counts for " +
           std::to_string(nranks) + " ranks");
  }
  if (inputElements(shape, nranks) > 0 && request.send == nullptr) reject("no input buffer");
  if (outputElements(shape, nranks) > 0 && request.recv == nullptr) reject("no output buffer");
}

Engine::Handle Engine::Impl::submit(LocalRequest request) {
  std::vector<LocalRequest> one;
  one.push_back(std::move(request));
  return submitTogether(std::move(one)).front();
}

std::vector<Engine::Handle> Engine::Impl::submitTogether(std::vector<LocalRequest> requests) {
  for (const LocalRequest& request : requests) validate(request);
  std::vector<Handle> opened;
  try {
    for (LocalRequest& request : requests) {
      request.handle = handles.open(request.name, kindName(request.shape.kind), rank);
      opened.push_back(request.handle);
    }
  } catch (...) {
    for (Handle handle : opened) handles.discard(handle);
    throw;
  }
  const Clock::time_point now = Clock::now();
  for (LocalRequest& request : requests) request.submittedAt = now;

  std::unique_lock lock(mutex);
  if (!stopped) {
    for (LocalRequest& request : requests) incoming.push_back(std::move(request));
    return opened;
  }
  const std::string why = failure;
  const hoopResult_t code = failureCode;
  lock.unlock();
  for (const LocalRequest& request : requests) {
    handles.complete(request.handle, code,
                     prefix() + kindName(request.shape.kind) + " of tensor '" + request.name +
                         "' cannot run: the engine stopped: " + why);
  }
  return opened;
}

Engine::Engine(hoopComm_t comm, EngineOptions options)
    : impl_(std::make_unique<Impl>(comm, options)) {
  impl_->thread = std::thread([impl = impl_.get()] { impl->runCycles(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopRequested = true;
  }
  impl_->thread.join();
}

Engine::Handle Engine::allReduce(std::string name, const void* send, void* recv, size_t count,
                                 hoopDataType_t type, hoopRedOp_t op, double prescale,
                                 double postscale) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kAllReduce, type, op, 0, count, prescale, postscale};
  request.send = send;
  request.recv = recv;
  return impl_->submit(std::move(request));
}

std::vector<Engine::Handle> Engine::groupedAllReduce(std::vector<AllReduceRequest> requests,
                                                     hoopRedOp_t op, double prescale,
                                                     double postscale) {
  std::vector<LocalRequest> locals(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    AllReduceRequest& r = requests[i];
    locals[i].name = std::move(r.name);
    locals[i].shape = {RequestKind::kAllReduce, r.type, op, 0, r.count, prescale, postscale};
    locals[i].send = r.send;
    locals[i].recv = r.recv;
  }
  return impl_->submitTogether(std::move(locals));
}

Engine::Handle Engine::broadcast(std::string name, void* data, size_t count, hoopDataType_t type,
                                 int root) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kBroadcast, type, hoopSum, root, count, 1.0, 1.0};
  request.send = data;
  request.recv = data;
  return impl_->submit(std::move(request));
}

Engine::Handle Engine::allGather(std::string name, const void* send, size_t count,
                                 hoopDataType_t type, AllGatherAllocator allocate) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kAllGather, type, hoopSum, 0, count, 1.0, 1.0};
  request.send = send;
  request.allocate = std::move(allocate);
  return impl_->submit(std::move(request));
}

Engine::Handle Engine::allToAll(std::string name, const void* send, void* recv, size_t countPerRank,
                                hoopDataType_t type) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kAllToAll, type, hoopSum, 0, countPerRank, 1.0, 1.0};
  request.send = send;
  request.recv = recv;
  return impl_->submit(std::move(request));
}

Engine::Handle Engine::allToAll(std::string name, const void* send, std::vector<size_t> sendCounts,
                                hoopDataType_t type, Allocator allocate) {
  LocalRequest request;
  request.name = std::move(name);
  const size_t total = std::accumulate(sendCounts.begin(), sendCounts.end(), size_t{0});
  request.shape = {RequestKind::kAllToAllv, type, hoopSum, 0, total, 1.0, 1.0};
  request.send = send;
  request.sendCounts = std::move(sendCounts);
  request.allocate = std::move(allocate);
  return impl_->submit(std::move(request));
}

Engine::Handle Engine::reduceScatter(std::string name, const void* send, void* recv,
                                     size_t recvCount, hoopDataType_t type, hoopRedOp_t op) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kReduceScatter, type, op, 0, recvCount, 1.0, 1.0};
  request.send = send;
  request.recv = recv;
  return impl_->submit(std::move(request));
}

Engine::Handle Engine::barrier(std::string name) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kBarrier, hoopUint8, hoopSum, 0, 0, 1.0, 1.0};
  return impl_->submit(std::move(request));
}

int Engine::join() {
  std::unique_lock lock(impl_->mutex);
  const uint64_t generation = impl_->joinGeneration;
  impl_->joinRequested = true;
  impl_->joinChanged.wait(lock,
                          [&] { return impl_->joinGeneration != generation || impl_->stopped; });
  if (impl_->joinGeneration == generation) {
    throw Exception(impl_->failureCode,
                    impl_->prefix() + "join did not complete: " + impl_->failure);
  }
  return impl_->lastJoined;
}

void Engine::whenDone(Handle handle, Callback callback) {
  impl_->handles.whenDone(handle, std::move(callback));
}

bool Engine::poll(Handle handle) { return impl_->handles.poll(handle); }

void Engine::wait(Handle handle) { impl_->handles.wait(handle); }

void Engine::synchronize() { impl_->handles.waitUpTo(impl_->handles.newest()); }

Engine::Stats Engine::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

int Engine::rank() const { return impl_->rank; }

int Engine::size() const { return impl_->nranks; }

}  // namespace hoop::train
