// hoop._hoop.Communicator: the C API over raw addresses. Python passes tensor.data_ptr() (an int)
// so contiguous host tensors are used in place, without a copy; the Python layer checks layout,
// device and dtype before calling, and keeps the tensors alive until the call returns.
//
// Every call releases the GIL while it waits for peers, so other Python threads (a training loop,
// the hoop.torch worker) keep running. Calls on one communicator are serialised by a mutex: the C
// API expects one caller at a time per communicator, and the torch.distributed backend may be
// called from autograd threads.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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
    std::string raw = id;
    if (raw.size() != HOOP_UNIQUE_ID_BYTES) {
      throw hoop::Exception(hoopInvalidArgument, "Communicator: a unique id has " +
                                                     std::to_string(HOOP_UNIQUE_ID_BYTES) +
                                                     " bytes, got " + std::to_string(raw.size()));
    }
    hoopUniqueId unique{};
    std::memcpy(unique.internal, raw.data(), raw.size());
    py::gil_scoped_release unlocked;
    return std::make_unique<PyCommunicator>(
        hoop::Communicator(nranks, hoop::UniqueId::fromRaw(unique), rank));
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

  void allReduce(uintptr_t send, uintptr_t recv, size_t count, int type, int op) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    check(hoopAllReduce(address(send), address(recv), count, dataType(type), redOp(op), comm,
                        nullptr),
          comm);
  }
  void broadcast(uintptr_t send, uintptr_t recv, size_t count, int type, int root) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    check(hoopBroadcast(address(send), address(recv), count, dataType(type), root, comm, nullptr),
          comm);
  }
  void reduce(uintptr_t send, uintptr_t recv, size_t count, int type, int op, int root) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    check(hoopReduce(address(send), address(recv), count, dataType(type), redOp(op), root, comm,
                     nullptr),
          comm);
  }
  void allGather(uintptr_t send, uintptr_t recv, size_t sendCount, int type) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    check(hoopAllGather(address(send), address(recv), sendCount, dataType(type), comm, nullptr),
          comm);
  }
  void reduceScatter(uintptr_t send, uintptr_t recv, size_t recvCount, int type, int op) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    check(hoopReduceScatter(address(send), address(recv), recvCount, dataType(type), redOp(op),
                            comm, nullptr),
          comm);
  }
  void allToAll(uintptr_t send, uintptr_t recv, size_t countPerRank, int type) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    check(hoopAllToAll(address(send), address(recv), countPerRank, dataType(type), comm, nullptr),
          comm);
  }
  // All sends and receives run together in one group, so two ranks may exchange without
  // deadlocking whatever order they list them in.
  void sendRecv(const std::vector<Transfer>& sends, const std::vector<Transfer>& recvs) {
    std::lock_guard lock(mutex_);
    hoopComm_t comm = live().handle();
    hoop::group([&] {
      for (const auto& [pointer, count, type, peer] : sends) {
        check(hoopSend(address(pointer), count, dataType(type), peer, comm, nullptr), comm);
      }
      for (const auto& [pointer, count, type, peer] : recvs) {
        check(hoopRecv(address(pointer), count, dataType(type), peer, comm, nullptr), comm);
      }
    });
  }
  void barrier() {
    std::lock_guard lock(mutex_);
    live().barrier();
  }

  // Frees the communicator now (later calls raise); idempotent.
  void destroy() {
    std::lock_guard lock(mutex_);
    comm_.reset();
  }
  // From any thread: unblocks a call in progress on another thread, then frees the communicator.
  // Deliberately not under the mutex, which that call holds.
  void abort() {
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

  using Self = PyCommunicator;
  const auto unlocked = py::call_guard<py::gil_scoped_release>();
  py::class_<Self>(module, "Communicator")
      .def_static("from_environment", &Self::fromEnvironment, unlocked,
                  "Rank, size and root address from hooprun, mpirun, srun or torchrun.")
      .def_static("from_unique_id", &Self::fromUniqueId, py::arg("nranks"), py::arg("unique_id"),
                  py::arg("rank"), "Joins the communicator that unique_id describes.")
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
      .def("destroy", &Self::destroy, unlocked)
      .def("abort", &Self::abort, unlocked)
      .def("alive", &Self::alive);
}

}  // namespace hoop::python
