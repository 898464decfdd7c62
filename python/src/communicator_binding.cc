// hoop._hoop.Communicator: the C API over raw addresses. Python passes tensor.data_ptr() (an int)
// so contiguous host tensors are used in place, without a copy; the Python layer checks layout,
// device and dtype before calling, and keeps the tensors alive until the call returns.
//
// Every call releases the GIL while it waits for peers, so other Python threads (a training loop,
// the hoop.torch worker) keep running. Calls on one communicator are serialised by a mutex: the C
// API expects one caller at a time per communicator, and the torch.distributed backend may be
// called from autograd threads.
//
// A non-blocking communicator (from_unique_id with blocking=False) queues each operation on
// hoop's own thread: the operation methods return the call's ticket at once, and wait_ticket
// tells, from any thread, when that call has ended (the torch.distributed backend's Work objects
// complete from it). Destruction and abort first keep every waiter out, so no wait outlives the
// handle.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/types.h"
#include "bindings.h"
#include "hoop/hoop.h"
#include "hoop/hoop.hpp"

namespace py = pybind11;

namespace hoop::python {
namespace {

void* address(uintptr_t pointer) { return reinterpret_cast<void*>(pointer); }

// A unique id as Python holds it (the bytes of hoopUniqueId), checked for its length.
hoopUniqueId uniqueIdFromBytes(const py::bytes& id) {
  const std::string raw = id;
  if (raw.size() != HOOP_UNIQUE_ID_BYTES) {
    throw hoop::Exception(hoopInvalidArgument, "Communicator: a unique id has " +
                                                   std::to_string(HOOP_UNIQUE_ID_BYTES) +
                                                   " bytes, got " + std::to_string(raw.size()));
  }
  hoopUniqueId unique{};
  std::memcpy(unique.internal, raw.data(), raw.size());
  return unique;
}

// (address, element count, data type, peer) of one point-to-point transfer.
using Transfer = std::tuple<uintptr_t, size_t, int, int>;

class PyCommunicator {
 public:
  explicit PyCommunicator(hoop::Communicator comm) : comm_(std::move(comm)) {}

  // unique_ptr: the mutex makes the object immovable, so pybind11 takes ownership of a pointer.
  static std::unique_ptr<PyCommunicator> fromEnvironment() {
    return std::make_unique<PyCommunicator>(hoop::Communicator::fromEnvironment());
  }
  static std::unique_ptr<PyCommunicator> fromUniqueId(int nranks, const py::bytes& id, int rank) {
    const hoopUniqueId unique = uniqueIdFromBytes(id);
    py::gil_scoped_release unlocked;
    return std::make_unique<PyCommunicator>(
        hoop::Communicator(nranks, hoop::UniqueId::fromRaw(unique), rank));
  }
  // blocking=false: operations are queued on hoop's thread (see wait_ticket). timeoutSeconds <= 0
  // keeps HOOP_TIMEOUT's per-operation limit. Returns once the communicator is ready.
  static std::unique_ptr<PyCommunicator> fromUniqueIdConfig(int nranks, const py::bytes& id,
                                                            int rank, bool blocking,
                                                            int timeoutSeconds) {
    const hoopUniqueId unique = uniqueIdFromBytes(id);
    hoopConfig_t config = hoop::defaultConfig();
    config.blocking = blocking ? 1 : 0;
    if (timeoutSeconds > 0) config.timeoutSeconds = timeoutSeconds;
    py::gil_scoped_release unlocked;
    hoop::Communicator comm(nranks, hoop::UniqueId::fromRaw(unique), rank, config);
    waitUntilReady(comm);
    return std::make_unique<PyCommunicator>(std::move(comm));
  }
  static py::bytes createUniqueId() {
    hoop::UniqueId id = hoop::UniqueId::create();
    return py::bytes(id.raw().internal, HOOP_UNIQUE_ID_BYTES);
  }

  int rank() { return live().rank(); }
  int size() { return live().size(); }
  int localRank() { return live().localRank(); }
  int localSize() { return live().localSize(); }
  int crossRank() { return live().crossRank(); }
  int crossSize() { return live().crossSize(); }
  uintptr_t handle() { return reinterpret_cast<uintptr_t>(live().handle()); }

  uint64_t allReduce(uintptr_t send, uintptr_t recv, size_t count, int type, int op) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    issued(hoopAllReduce(address(send), address(recv), count, dataType(type), redOp(op), comm,
                         nullptr),
           comm);
    return ticket();
  }
  uint64_t broadcast(uintptr_t send, uintptr_t recv, size_t count, int type, int root) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    issued(hoopBroadcast(address(send), address(recv), count, dataType(type), root, comm, nullptr),
           comm);
    return ticket();
  }
  uint64_t reduce(uintptr_t send, uintptr_t recv, size_t count, int type, int op, int root) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    issued(hoopReduce(address(send), address(recv), count, dataType(type), redOp(op), root, comm,
                      nullptr),
           comm);
    return ticket();
  }
  uint64_t allGather(uintptr_t send, uintptr_t recv, size_t sendCount, int type) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    issued(hoopAllGather(address(send), address(recv), sendCount, dataType(type), comm, nullptr),
           comm);
    return ticket();
  }
  uint64_t reduceScatter(uintptr_t send, uintptr_t recv, size_t recvCount, int type, int op) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    issued(hoopReduceScatter(address(send), address(recv), recvCount, dataType(type), redOp(op),
                             comm, nullptr),
           comm);
    return ticket();
  }
  uint64_t allToAll(uintptr_t send, uintptr_t recv, size_t countPerRank, int type) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    issued(hoopAllToAll(address(send), address(recv), countPerRank, dataType(type), comm, nullptr),
           comm);
    return ticket();
  }
  // All sends and receives run together in one group, so two ranks may exchange without
  // deadlocking whatever order they list them in.
  uint64_t sendRecv(const std::vector<Transfer>& sends, const std::vector<Transfer>& recvs) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    hoop::group([&] {
      for (const auto& [pointer, count, type, peer] : sends) {
        issued(hoopSend(address(pointer), count, dataType(type), peer, comm, nullptr), comm);
      }
      for (const auto& [pointer, count, type, peer] : recvs) {
        issued(hoopRecv(address(pointer), count, dataType(type), peer, comm, nullptr), comm);
      }
    });
    return ticket();
  }

  // Whether the calls up to `ticket` have ended, waiting at most timeoutMs for it; raises the
  // failure of one of them. Not under the operation mutex: it runs while other calls are issued.
  bool waitTicket(uint64_t ticket, int timeoutMs) {
    std::shared_lock keep(lifetime_);
    if (!comm_ || comm_->handle() == nullptr) {
      throw hoop::Exception(hoopInvalidUsage,
                            "the hoop communicator was shut down before the operation ended");
    }
    hoopResult_t result = hoopCommWaitTicket(comm_->handle(), ticket, timeoutMs);
    if (result == hoopInProgress) return false;
    if (result != hoopSuccess) throw hoop::Exception(result, hoopGetLastError(nullptr));
    return true;
  }

  // The ranks passing the same color get a communicator of their own, ranked by key; color < 0
  // takes part and gets None. Collective over this communicator. The new one has this one's
  // settings (non-blocking included) and is ready when returned.
  std::unique_ptr<PyCommunicator> split(int color, int key) {
    std::optional<hoop::Communicator> made;
    {
      std::lock_guard lock(mutex_);
      made = live().split(color < 0 ? HOOP_SPLIT_NOCOLOR : color, key);
    }
    if (!made) return nullptr;
    waitUntilReady(*made);
    return std::make_unique<PyCommunicator>(std::move(*made));
  }
  uint64_t barrier() {
    std::lock_guard lock(mutex_);
    live().barrier();
    return ticket();
  }

  // Frees the communicator now (later calls raise); idempotent. A non-blocking one first
  // finishes what was queued.
  void destroy() {
    std::lock_guard lock(mutex_);
    std::unique_lock alone(lifetime_);
    comm_.reset();
  }
  // From any thread: unblocks a call in progress on another thread, then frees the communicator.
  // Deliberately not under the mutex, which that call holds; waiters leave within their bound.
  void abort() {
    std::unique_lock alone(lifetime_);
    if (comm_) comm_->abort();
  }
  bool alive() const { return comm_.has_value(); }

 private:
  hoop::Communicator& live() {
    if (!comm_ || comm_->handle() == nullptr) {
      throw hoop::Exception(hoopInvalidUsage,
                            "the hoop communicator was shut down; call hoop.init() again");
    }
    return *comm_;
  }
  // A non-blocking communicator's initialisation, polled gently: the other ranks may still be
  // starting on the same cores, and a spinning poll would slow them down.
  static void waitUntilReady(const hoop::Communicator& comm) {
    while (!comm.ready()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // An operation's result: a non-blocking communicator's hoopInProgress means queued.
  static void issued(hoopResult_t result, hoopComm_t comm) {
    if (result != hoopInProgress) check(result, comm);
  }
  // The ticket of the call just made (0 on a blocking communicator, whose calls have ended).
  uint64_t ticket() {
    uint64_t value = 0;
    check(hoopCommQueueTicket(live().handle(), &value), live().handle());
    return value;
  }
  static hoopDataType_t dataType(int type) {
    if (!hoop::isDataType(type)) {
      throw hoop::Exception(hoopInvalidArgument, "unknown hoop data type " + std::to_string(type));
    }
    return static_cast<hoopDataType_t>(type);
  }
  static hoopRedOp_t redOp(int op) {
    if (!hoop::isRedOp(op)) {
      throw hoop::Exception(hoopInvalidArgument,
                            "unknown hoop reduction operation " + std::to_string(op));
    }
    return static_cast<hoopRedOp_t>(op);
  }

  std::optional<hoop::Communicator> comm_;
  std::mutex mutex_;
  // Shared by wait_ticket callers, taken alone to free the communicator.
  std::shared_mutex lifetime_;
};

}  // namespace

void bindCommunicator(py::module_& module) {
  // Attribute names from the project's one table (base/types.h): numpy's and torch's spellings
  // for types, hoop's for operations.
  py::module_ types = module.def_submodule("dtype", "hoopDataType_t values");
  for (const hoop::DataTypeInfo& info : hoop::kDataTypes) {
    types.attr(std::string(info.sizedName).c_str()) = static_cast<int>(info.type);
  }

  py::module_ ops = module.def_submodule("op", "hoopRedOp_t values");
  for (const hoop::RedOpInfo& info : hoop::kRedOps) {
    ops.attr(std::string(info.name).c_str()) = static_cast<int>(info.op);
  }

  module.def(
      "timeline_start",
      [](const std::string& path, int rank) { check(hoopTimelineStart(path.c_str(), rank)); },
      py::arg("path"), py::arg("rank"),
      "Writes the timeline (a Chrome trace) to path with .<rank> before its extension.");
  module.def(
      "timeline_stop", [] { check(hoopTimelineStop()); }, "Closes the timeline's file.");

  using Self = PyCommunicator;
  const auto unlocked = py::call_guard<py::gil_scoped_release>();
  py::class_<Self>(module, "Communicator")
      .def_static("from_environment", &Self::fromEnvironment, unlocked,
                  "Rank, size and root address from hooprun, mpirun, srun or torchrun.")
      .def_static("from_unique_id", &Self::fromUniqueId, py::arg("nranks"), py::arg("unique_id"),
                  py::arg("rank"), "Joins the communicator that unique_id describes.")
      .def_static("from_unique_id_config", &Self::fromUniqueIdConfig, py::arg("nranks"),
                  py::arg("unique_id"), py::arg("rank"), py::arg("blocking"),
                  py::arg("timeout_seconds"),
                  "Joins with settings; blocking=False queues operations on hoop's thread.")
      .def_static("create_unique_id", &Self::createUniqueId,
                  "Starts the rendezvous in this process; give the bytes to every rank.")
      .def("rank", &Self::rank)
      .def("size", &Self::size)
      .def("local_rank", &Self::localRank)
      .def("local_size", &Self::localSize)
      .def("cross_rank", &Self::crossRank)
      .def("cross_size", &Self::crossSize)
      .def("handle", &Self::handle, "The hoopComm_t as an int.")
      .def("allreduce", &Self::allReduce, unlocked)
      .def("broadcast", &Self::broadcast, unlocked)
      .def("reduce", &Self::reduce, unlocked)
      .def("allgather", &Self::allGather, unlocked)
      .def("reduce_scatter", &Self::reduceScatter, unlocked)
      .def("alltoall", &Self::allToAll, unlocked)
      .def("send_recv", &Self::sendRecv, unlocked)
      .def("barrier", &Self::barrier, unlocked)
      .def("wait_ticket", &Self::waitTicket, py::arg("ticket"), py::arg("timeout_ms"), unlocked,
           "True once the calls up to ticket have ended; raises their failure.")
      .def("split", &Self::split, py::arg("color"), py::arg("key"), unlocked)
      .def("destroy", &Self::destroy, unlocked)
      .def("abort", &Self::abort, unlocked)
      .def("alive", &Self::alive);
}

}  // namespace hoop::python
