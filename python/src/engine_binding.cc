// hoop._hoop.Engine: the training engine (include/hoop/train.hpp) over a Communicator's handle.
// Requests take raw addresses like the Communicator binding; the Python layer keeps the tensors
// alive until their handle completes. Every call releases the GIL: the waiting ones (wait,
// synchronize, join, closing) so other Python threads run meanwhile, and the submissions because
// they take the engine's lock, which must never be waited for while holding the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/types.h"
#include "bindings.h"
#include "hoop/hoop.h"
#include "hoop/hoop.hpp"
#include "hoop/train.hpp"

namespace py = pybind11;

namespace hoop::python {
namespace {

void* address(uintptr_t pointer) { return reinterpret_cast<void*>(pointer); }

size_t elementBytes(hoopDataType_t type) {
  return hoop::dataTypeSize(static_cast<hoop::DataType>(type));
}

hoopDataType_t dataType(int type) {
  if (!hoop::isDataType(type)) {
    throw hoop::Exception(hoopInvalidArgument, "unknown hoop data type " + std::to_string(type));
  }
  return static_cast<hoopDataType_t>(type);
}

hoopRedOp_t redOp(int op) {
  if (!hoop::isRedOp(op)) {
    throw hoop::Exception(hoopInvalidArgument,
                          "unknown hoop reduction operation " + std::to_string(op));
  }
  return static_cast<hoopRedOp_t>(op);
}

// The result of one allgather: allocated by the engine thread once every rank's count is known.
struct GatheredBuffer {
  std::vector<uint8_t> bytes;
  std::vector<size_t> counts;
};

class PyEngine {
 public:
  using Handle = hoop::train::Engine::Handle;

  explicit PyEngine(uintptr_t comm)
      : engine_(std::make_unique<hoop::train::Engine>(reinterpret_cast<hoopComm_t>(comm))) {}

  Handle allReduce(std::string name, uintptr_t send, uintptr_t recv, size_t count, int type, int op,
                   double prescale, double postscale) {
    return live().allReduce(std::move(name), address(send), address(recv), count, dataType(type),
                            redOp(op), prescale, postscale);
  }
  // (name, send, recv, count, type) per tensor: agreed and fused together, one handle each.
  std::vector<Handle> groupedAllReduce(
      const std::vector<std::tuple<std::string, uintptr_t, uintptr_t, size_t, int>>& tensors,
      int op, double prescale, double postscale) {
    std::vector<hoop::train::Engine::AllReduceRequest> requests;
    requests.reserve(tensors.size());
    for (const auto& [name, send, recv, count, type] : tensors) {
      requests.push_back({name, address(send), address(recv), count, dataType(type)});
    }
    return live().groupedAllReduce(std::move(requests), redOp(op), prescale, postscale);
  }
  Handle broadcast(std::string name, uintptr_t data, size_t count, int type, int root) {
    return live().broadcast(std::move(name), address(data), count, dataType(type), root);
  }
  Handle allGather(std::string name, uintptr_t send, size_t count, int type) {
    auto buffer = std::make_shared<GatheredBuffer>();
    Handle handle = live().allGather(std::move(name), address(send), count, dataType(type),
                                     allocator(buffer, dataType(type)));
    remember(handle, std::move(buffer));
    return handle;
  }
  // Uneven all-to-all: sendCounts[j] elements to rank j; the result comes from takeGathered with
  // the counts received from each rank.
  Handle allToAllV(std::string name, uintptr_t send, std::vector<size_t> sendCounts, int type) {
    auto buffer = std::make_shared<GatheredBuffer>();
    Handle handle = live().allToAll(std::move(name), address(send), std::move(sendCounts),
                                    dataType(type), allocator(buffer, dataType(type)));
    remember(handle, std::move(buffer));
    return handle;
  }
  Handle allToAll(std::string name, uintptr_t send, uintptr_t recv, size_t countPerRank, int type) {
    return live().allToAll(std::move(name), address(send), address(recv), countPerRank,
                           dataType(type));
  }
  Handle reduceScatter(std::string name, uintptr_t send, uintptr_t recv, size_t recvCount, int type,
                       int op) {
    return live().reduceScatter(std::move(name), address(send), address(recv), recvCount,
                                dataType(type), redOp(op));
  }
  Handle barrier(std::string name) { return live().barrier(std::move(name)); }
  int join() { return live().join(); }
  bool poll(Handle handle) { return live().poll(handle); }
  void wait(Handle handle) {
    try {
      live().wait(handle);
    } catch (...) {
      forgetGathered(handle);
      throw;
    }
  }
  void synchronize() { live().synchronize(); }

  // After wait(handle) of an allgather or uneven all-to-all: (uint8 array of the gathered bytes,
  // per-rank counts). The array owns the engine's buffer, so no copy is made.
  py::tuple takeGathered(Handle handle) {
    std::shared_ptr<GatheredBuffer> buffer = forgetGathered(handle);
    if (!buffer) {
      throw hoop::Exception(hoopInvalidUsage,
                            "no allgather result for handle " + std::to_string(handle));
    }
    auto* owner = new std::shared_ptr<GatheredBuffer>(buffer);
    py::capsule free(owner,
                     [](void* p) { delete static_cast<std::shared_ptr<GatheredBuffer>*>(p); });
    const size_t used = buffer->bytes.empty() ? 0 : buffer->bytes.size() - 1;
    py::array_t<uint8_t> array({used}, {sizeof(uint8_t)}, buffer->bytes.data(), free);
    return py::make_tuple(array, buffer->counts);
  }

  py::dict stats() {
    const hoop::train::EngineStats s = live().stats();
    py::dict d;
    d["cycles"] = s.cycles;
    d["negotiation_rounds"] = s.negotiationRounds;
    d["cache_hits"] = s.cacheHits;
    d["collective_calls"] = s.collectiveCalls;
    d["fused_tensors"] = s.fusedTensors;
    d["completed_requests"] = s.completedRequests;
    d["failed_requests"] = s.failedRequests;
    return d;
  }

  // Collective (every rank's engine stops in the same cycle); idempotent.
  void close() { engine_.reset(); }

 private:
  hoop::train::Engine& live() {
    if (!engine_) throw hoop::Exception(hoopInvalidUsage, "the hoop engine was shut down");
    return *engine_;
  }
  // Room for the result, allocated on the engine's thread once the counts are known.
  static hoop::train::Engine::Allocator allocator(std::shared_ptr<GatheredBuffer> buffer,
                                                  hoopDataType_t type) {
    const size_t bytesPerElement = elementBytes(type);
    return [buffer, bytesPerElement](const std::vector<size_t>& counts) -> void* {
      size_t total = 0;
      for (size_t c : counts) total += c;
      buffer->counts = counts;
      // One spare byte so that an empty result still has a valid address.
      buffer->bytes.resize(total * bytesPerElement + 1);
      return buffer->bytes.data();
    };
  }
  void remember(Handle handle, std::shared_ptr<GatheredBuffer> buffer) {
    std::lock_guard lock(gatheredMutex_);
    gathered_[handle] = std::move(buffer);
  }
  std::shared_ptr<GatheredBuffer> forgetGathered(Handle handle) {
    std::lock_guard lock(gatheredMutex_);
    auto it = gathered_.find(handle);
    if (it == gathered_.end()) return nullptr;
    auto buffer = std::move(it->second);
    gathered_.erase(it);
    return buffer;
  }

  std::unique_ptr<hoop::train::Engine> engine_;
  std::mutex gatheredMutex_;
  std::unordered_map<Handle, std::shared_ptr<GatheredBuffer>> gathered_;
};

}  // namespace

void bindEngine(py::module_& module) {
  using Self = PyEngine;
  const auto unlocked = py::call_guard<py::gil_scoped_release>();
  py::class_<Self>(module, "Engine")
      .def(py::init<uintptr_t>(), py::arg("communicator_handle"), unlocked,
           "Starts the engine on a communicator (Communicator.handle()); options come from "
           "HOOP_FUSION_THRESHOLD, HOOP_CYCLE_TIME, HOOP_STALL_CHECK_TIME, HOOP_CACHE_CAPACITY.")
      .def("allreduce", &Self::allReduce, unlocked)
      .def("broadcast", &Self::broadcast, unlocked)
      .def("grouped_allreduce", &Self::groupedAllReduce, unlocked)
      .def("allgather", &Self::allGather, unlocked)
      .def("alltoallv", &Self::allToAllV, unlocked)
      .def("alltoall", &Self::allToAll, unlocked)
      .def("reducescatter", &Self::reduceScatter, unlocked)
      .def("barrier", &Self::barrier, unlocked)
      .def("join", &Self::join, unlocked)
      .def("poll", &Self::poll, unlocked)
      .def("wait", &Self::wait, unlocked)
      .def("synchronize", &Self::synchronize, unlocked)
      .def("take_gathered", &Self::takeGathered)
      .def("stats", &Self::stats)
      .def("close", &Self::close, unlocked);
}

}  // namespace hoop::python
