// The engine behind hoop's TensorFlow kernels: one hoop::train::Engine per process, started and
// stopped from Python, and the C functions the kernels submit through (engine_shim.h says why
// they are C).
#include "engine_shim.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hoop/hoop.hpp"
#include "hoop/train.hpp"

namespace {

using hoop::train::Engine;

std::mutex gEngineMutex;
std::shared_ptr<Engine> gEngine;  // submissions hold a copy while they call into it
thread_local std::string tLastError;

int remember(int code, std::string message) {
  tLastError = std::move(message);
  return code;
}

// The running engine, or nullptr after setting the error a kernel reports for `name`.
std::shared_ptr<Engine> engineFor(const char* operation, const char* name) {
  std::lock_guard lock(gEngineMutex);
  if (!gEngine) {
    remember(hoopInvalidUsage, std::string(operation) + " of tensor '" + name +
                                   "': hoop is not initialized; call hoop.tensorflow.init() first");
  }
  return gEngine;
}

// Runs a submission, turning what it throws into a return code and this thread's last error.
template <typename Submit>
int guarded(Submit&& submit) {
  try {
    submit();
    return 0;
  } catch (const hoop::Exception& e) {
    return remember(e.code(), e.what());
  } catch (const std::exception& e) {
    return remember(hoopInternalError, e.what());
  }
}

Engine::Callback completion(HoopTfDone done, void* context) {
  return [done, context](hoopResult_t code, const std::string& message) {
    done(context, code, message.c_str());
  };
}

Engine::Allocator allocator(HoopTfAllocate allocate, void* context) {
  return [allocate, context](const std::vector<size_t>& counts) -> void* {
    char error[512] = {0};
    void* out = allocate(context, counts.data(), counts.size(), error, sizeof(error));
    if (out == nullptr && error[0] != '\0') throw std::runtime_error(error);
    return out;
  };
}

// A group finishes when its last member does, with the first failure among them.
struct GroupCompletion {
  GroupCompletion(size_t members, HoopTfDone doneFunction, void* doneContext)
      : remaining(members), done(doneFunction), context(doneContext) {}
  void finished(hoopResult_t code, const std::string& message) {
    {
      std::lock_guard lock(mutex);
      if (code != hoopSuccess && firstCode == hoopSuccess) {
        firstCode = code;
        firstMessage = message;
      }
    }
    if (remaining.fetch_sub(1) == 1) done(context, firstCode, firstMessage.c_str());
  }
  std::atomic<size_t> remaining;
  HoopTfDone done;
  void* context;
  std::mutex mutex;
  hoopResult_t firstCode = hoopSuccess;
  std::string firstMessage;
};

}  // namespace

extern "C" {

int hoopTfStart(uintptr_t communicator) {
  std::lock_guard lock(gEngineMutex);
  if (gEngine) return 0;
  return guarded(
      [&] { gEngine = std::make_shared<Engine>(reinterpret_cast<hoopComm_t>(communicator)); });
}

int hoopTfStop(void) {
  std::shared_ptr<Engine> engine;
  {
    std::lock_guard lock(gEngineMutex);
    engine = std::move(gEngine);
  }
  if (!engine) return 0;
  // A kernel may still be inside a submission with its own reference; the engine stops here, on
  // the caller's thread, once that submission returned.
  while (engine.use_count() > 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return guarded([&] { engine.reset(); });
}

int hoopTfRunning(void) {
  std::lock_guard lock(gEngineMutex);
  return gEngine ? 1 : 0;
}

int hoopTfSize(void) {
  std::lock_guard lock(gEngineMutex);
  return gEngine ? gEngine->size() : 0;
}

const char* hoopTfLastError(void) { return tLastError.c_str(); }

size_t hoopTfStats(uint64_t* values, size_t capacity) {
  std::shared_ptr<Engine> engine;
  {
    std::lock_guard lock(gEngineMutex);
    engine = gEngine;
  }
  if (!engine) return 0;
  const hoop::train::EngineStats s = engine->stats();
  const uint64_t all[] = {s.cycles,       s.cacheHits,         s.collectiveCalls,
                          s.fusedTensors, s.completedRequests, s.failedRequests};
  size_t written = 0;
  for (; written < capacity && written < std::size(all); ++written) values[written] = all[written];
  return written;
}

int hoopTfAllReduce(const char* name, const void* send, void* recv, size_t count, int type, int op,
                    double prescale, double postscale, HoopTfDone done, void* context) {
  auto engine = engineFor("allreduce", name);
  if (!engine) return hoopInvalidUsage;
  return guarded([&] {
    const auto handle =
        engine->allReduce(name, send, recv, count, static_cast<hoopDataType_t>(type),
                          static_cast<hoopRedOp_t>(op), prescale, postscale);
    engine->whenDone(handle, completion(done, context));
  });
}

int hoopTfGroupedAllReduce(size_t tensors, const char* const* names, const void* const* sends,
                           void* const* recvs, const size_t* counts, int type, int op,
                           double prescale, double postscale, HoopTfDone done, void* context) {
  auto engine = engineFor("grouped allreduce", tensors > 0 ? names[0] : "");
  if (!engine) return hoopInvalidUsage;
  if (tensors == 0) {
    done(context, hoopSuccess, "");
    return 0;
  }
  return guarded([&] {
    std::vector<Engine::AllReduceRequest> requests;
    for (size_t i = 0; i < tensors; ++i) {
      requests.push_back(
          {names[i], sends[i], recvs[i], counts[i], static_cast<hoopDataType_t>(type)});
    }
    const auto handles = engine->groupedAllReduce(std::move(requests), static_cast<hoopRedOp_t>(op),
                                                  prescale, postscale);
    auto group = std::make_shared<GroupCompletion>(handles.size(), done, context);
    for (const auto handle : handles) {
      engine->whenDone(handle, [group](hoopResult_t code, const std::string& message) {
        group->finished(code, message);
      });
    }
  });
}

int hoopTfBroadcast(const char* name, void* data, size_t count, int type, int root, HoopTfDone done,
                    void* context) {
  auto engine = engineFor("broadcast", name);
  if (!engine) return hoopInvalidUsage;
  return guarded([&] {
    const auto handle =
        engine->broadcast(name, data, count, static_cast<hoopDataType_t>(type), root);
    engine->whenDone(handle, completion(done, context));
  });
}

int hoopTfAllGather(const char* name, const void* send, size_t count, int type,
                    HoopTfAllocate allocate, HoopTfDone done, void* context) {
  auto engine = engineFor("allgather", name);
  if (!engine) return hoopInvalidUsage;
  return guarded([&] {
    const auto handle = engine->allGather(name, send, count, static_cast<hoopDataType_t>(type),
                                          allocator(allocate, context));
    engine->whenDone(handle, completion(done, context));
  });
}

int hoopTfAllToAll(const char* name, const void* send, const size_t* sendCounts, size_t ranks,
                   int type, HoopTfAllocate allocate, HoopTfDone done, void* context) {
  auto engine = engineFor("alltoall", name);
  if (!engine) return hoopInvalidUsage;
  return guarded([&] {
    const auto handle =
        engine->allToAll(name, send, std::vector<size_t>(sendCounts, sendCounts + ranks),
                         static_cast<hoopDataType_t>(type), allocator(allocate, context));
    engine->whenDone(handle, completion(done, context));
  });
}

int hoopTfReduceScatter(const char* name, const void* send, void* recv, size_t recvCount, int type,
                        int op, HoopTfDone done, void* context) {
  auto engine = engineFor("reducescatter", name);
  if (!engine) return hoopInvalidUsage;
  return guarded([&] {
    const auto handle =
        engine->reduceScatter(name, send, recv, recvCount, static_cast<hoopDataType_t>(type),
                              static_cast<hoopRedOp_t>(op));
    engine->whenDone(handle, completion(done, context));
  });
}

}  // extern "C"
