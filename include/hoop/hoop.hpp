// hoop's C++ API: a RAII communicator with typed calls over std::span. Errors throw
// hoop::Exception, which carries the hoopResult_t and the message hoopGetLastError gave.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "hoop/hoop.h"

namespace hoop {

// Default visibility: libhoop (built with hidden symbols) throws it too, from the training API, and
// a catch in the program must see one type, not a private copy of it.
class __attribute__((visibility("default"))) Exception : public std::runtime_error {
 public:
  Exception(hoopResult_t code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  hoopResult_t code() const { return code_; }

 private:
  hoopResult_t code_;
};

// Throws for anything but hoopSuccess, with comm's last error message (or this thread's).
inline void check(hoopResult_t result, hoopComm_t comm = nullptr) {
  if (result != hoopSuccess) {
    throw Exception(result,
                    std::string(hoopGetErrorString(result)) + ": " + hoopGetLastError(comm));
  }
}

// 16-bit floating-point element types, as raw bits (hoop reduces them in fp32).
struct half {
  uint16_t bits;
};
struct bfloat16 {
  uint16_t bits;
};

template <typename T>
constexpr hoopDataType_t dataTypeOf();
template <>
constexpr hoopDataType_t dataTypeOf<int8_t>() {
  return hoopInt8;
}
template <>
constexpr hoopDataType_t dataTypeOf<uint8_t>() {
  return hoopUint8;
}
template <>
constexpr hoopDataType_t dataTypeOf<int32_t>() {
  return hoopInt32;
}
template <>
constexpr hoopDataType_t dataTypeOf<uint32_t>() {
  return hoopUint32;
}
template <>
constexpr hoopDataType_t dataTypeOf<int64_t>() {
  return hoopInt64;
}
template <>
constexpr hoopDataType_t dataTypeOf<uint64_t>() {
  return hoopUint64;
}
template <>
constexpr hoopDataType_t dataTypeOf<half>() {
  return hoopFloat16;
}
template <>
constexpr hoopDataType_t dataTypeOf<float>() {
  return hoopFloat32;
}
template <>
constexpr hoopDataType_t dataTypeOf<double>() {
  return hoopFloat64;
}
template <>
constexpr hoopDataType_t dataTypeOf<bfloat16>() {
  return hoopBfloat16;
}

class UniqueId {
 public:
  // Starts the rendezvous in this process; send the id to every rank.
  static UniqueId create() {
    UniqueId id;
    check(hoopGetUniqueId(&id.raw_));
    return id;
  }
  static UniqueId fromRaw(const hoopUniqueId& raw) {
    UniqueId id;
    id.raw_ = raw;
    return id;
  }
  const hoopUniqueId& raw() const { return raw_; }

 private:
  hoopUniqueId raw_{};
};

// HOOP_CONFIG_INITIALIZER as a value: set the fields you need and pass it to Communicator.
inline hoopConfig_t defaultConfig() {
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  return config;
}

class Communicator {
 public:
  Communicator(int nranks, const UniqueId& id, int rank) {
    check(hoopCommInitRank(&comm_, nranks, id.raw(), rank));
  }
  // With per-communicator settings. A non-blocking one (config.blocking = 0) returns at once and
  // so do its calls: wait() (or poll ready()) before using it and before touching buffers.
  Communicator(int nranks, const UniqueId& id, int rank, hoopConfig_t config) {
    issued(hoopCommInitRankConfig(&comm_, nranks, id.raw(), rank, &config));
  }
  // Rank, size and root from hooprun, mpirun, srun or torchrun.
  static Communicator fromEnvironment() {
    hoopComm_t comm = nullptr;
    check(hoopCommInitFromEnv(&comm));
    return Communicator(comm);
  }
  ~Communicator() {
    if (comm_ != nullptr) hoopCommDestroy(comm_);
  }
  Communicator(Communicator&& other) noexcept : comm_(std::exchange(other.comm_, nullptr)) {}
  Communicator& operator=(Communicator&& other) noexcept {
    if (this != &other) {
      if (comm_ != nullptr) hoopCommDestroy(comm_);
      comm_ = std::exchange(other.comm_, nullptr);
    }
    return *this;
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  hoopComm_t handle() const { return comm_; }
  int rank() const { return query(hoopCommUserRank); }
  int size() const { return query(hoopCommCount); }
  int localRank() const { return query(hoopCommLocalRank); }
  int localSize() const { return query(hoopCommLocalCount); }
  int crossRank() const { return query(hoopCommCrossRank); }
  int crossSize() const { return query(hoopCommCrossCount); }

  template <typename T>
  void allReduce(std::span<const T> send, std::span<T> recv, hoopRedOp_t op = hoopSum) {
    sameSize(send.size(), recv.size(), "allReduce");
    issued(
        hoopAllReduce(send.data(), recv.data(), send.size(), dataTypeOf<T>(), op, comm_, nullptr));
  }
  template <typename T>
  void allReduce(std::span<T> data, hoopRedOp_t op = hoopSum) {
    allReduce(std::span<const T>(data), data, op);
  }

  template <typename T>
  void broadcast(std::span<T> data, int root) {
    issued(hoopBroadcast(data.data(), data.data(), data.size(), dataTypeOf<T>(), root, comm_,
                         nullptr));
  }

  // recv matters on root only (it may be empty elsewhere).
  template <typename T>
  void reduce(std::span<const T> send, std::span<T> recv, int root, hoopRedOp_t op = hoopSum) {
    if (rank() == root) sameSize(send.size(), recv.size(), "reduce");
    issued(hoopReduce(send.data(), recv.data(), send.size(), dataTypeOf<T>(), op, root, comm_,
                      nullptr));
  }

  // recv holds size() * send.size() elements.
  template <typename T>
  void allGather(std::span<const T> send, std::span<T> recv) {
    sameSize(send.size() * static_cast<size_t>(size()), recv.size(), "allGather");
    issued(hoopAllGather(send.data(), recv.data(), send.size(), dataTypeOf<T>(), comm_, nullptr));
  }

  // send holds size() * recv.size() elements.
  template <typename T>
  void reduceScatter(std::span<const T> send, std::span<T> recv, hoopRedOp_t op = hoopSum) {
    sameSize(send.size(), recv.size() * static_cast<size_t>(size()), "reduceScatter");
    issued(hoopReduceScatter(send.data(), recv.data(), recv.size(), dataTypeOf<T>(), op, comm_,
                             nullptr));
  }

  // send and recv hold size() blocks of the same length; block j of send goes to rank j, block i
  // of recv comes from rank i.
  template <typename T>
  void allToAll(std::span<const T> send, std::span<T> recv) {
    sameSize(send.size(), recv.size(), "allToAll");
    const size_t ranks = static_cast<size_t>(size());
    if (send.size() % ranks != 0) {
      throw Exception(hoopInvalidArgument, "allToAll: " + std::to_string(send.size()) +
                                               " elements do not split into " +
                                               std::to_string(ranks) + " equal blocks");
    }
    issued(hoopAllToAll(send.data(), recv.data(), send.size() / ranks, dataTypeOf<T>(), comm_,
                        nullptr));
  }

  // Outside a group() these complete one by one; pair them inside group() to exchange.
  template <typename T>
  void send(std::span<const T> data, int peer) {
    issued(hoopSend(data.data(), data.size(), dataTypeOf<T>(), peer, comm_, nullptr));
  }
  template <typename T>
  void recv(std::span<T> data, int peer) {
    issued(hoopRecv(data.data(), data.size(), dataTypeOf<T>(), peer, comm_, nullptr));
  }

  void barrier() { issued(hoopBarrier(comm_, nullptr)); }

  // Forces schedules (HOOP_ALGO's syntax) on the calls after it; "" returns them to hoop's own
  // choice. Every rank calls it at the same point with the same text (hoopCommSetAlgorithms).
  void setAlgorithms(const std::string& rules) {
    issued(hoopCommSetAlgorithms(comm_, rules.c_str()));
  }

  // Collective over this communicator (hoopCommSplit): the ranks passing the same color get a new
  // communicator of their own, ranked by key; HOOP_SPLIT_NOCOLOR takes part and gets nothing. It
  // has this communicator's settings, or `config`'s fields where they are set; a non-blocking one
  // must be wait()ed for before use.
  std::optional<Communicator> split(int color, int key) { return splitWith(color, key, nullptr); }
  std::optional<Communicator> split(int color, int key, hoopConfig_t config) {
    return splitWith(color, key, &config);
  }

  // Finishes what was issued (hoopCommFinalize); then only queries, destruction and abort() are
  // served. On a non-blocking communicator wait() for it to end.
  void finalize() { issued(hoopCommFinalize(comm_)); }

  // Non-blocking communicators: whether initialisation and everything queued have finished;
  // throws the first failure. Blocking ones: true, or the failure an earlier call met.
  bool ready() const {
    hoopResult_t state = hoopSuccess;
    check(hoopCommGetAsyncError(comm_, &state), comm_);
    if (state == hoopInProgress) return false;
    check(state, comm_);
    return true;
  }
  // Polls ready() until it holds (each queued operation is bounded by its timeout).
  void wait() const {
    while (!ready()) std::this_thread::yield();
  }

  // Unblocks any call in progress on another thread and frees the communicator.
  void abort() {
    if (comm_ != nullptr) check(hoopCommAbort(std::exchange(comm_, nullptr)));
  }

 private:
  explicit Communicator(hoopComm_t comm) : comm_(comm) {}
  // An operation's result: hoopInProgress is no failure here (a non-blocking communicator
  // queued it; see ready()).
  void issued(hoopResult_t result) const {
    if (result != hoopInProgress) check(result, comm_);
  }
  std::optional<Communicator> splitWith(int color, int key, hoopConfig_t* config) {
    hoopComm_t made = nullptr;
    issued(hoopCommSplit(comm_, color, key, &made, config));
    if (made == nullptr) return std::nullopt;
    return Communicator(made);
  }
  int query(hoopResult_t (*function)(const hoopComm_t, int*)) const {
    int value = 0;
    check(function(comm_, &value), comm_);
    return value;
  }
  static void sameSize(size_t expected, size_t actual, const char* call) {
    if (expected != actual) {
      throw Exception(hoopInvalidArgument, std::string(call) + ": buffer holds " +
                                               std::to_string(actual) + " elements, expected " +
                                               std::to_string(expected));
    }
  }

  hoopComm_t comm_ = nullptr;
};

// A premultiplied sum for one communicator's calls on T (hoopRedOpCreatePreMulSum): each rank's
// input multiplied by its factor, then summed. Pass it where a call takes its op (it converts to
// hoopRedOp_t). It must not outlive its communicator.
template <typename T>
class PreMulSum {
 public:
  // The factor, copied now.
  PreMulSum(const Communicator& comm, T factor) : comm_(comm.handle()) {
    check(hoopRedOpCreatePreMulSum(&op_, &factor, dataTypeOf<T>(), hoopScalarHostImmediate, comm_),
          comm_);
  }
  // A factor read each time a call with the op runs (device memory for calls on device memory:
  // see hoopScalarDevice); it must outlive the op.
  PreMulSum(const Communicator& comm, const T* factor) : comm_(comm.handle()) {
    check(hoopRedOpCreatePreMulSum(&op_, const_cast<T*>(factor), dataTypeOf<T>(), hoopScalarDevice,
                                   comm_),
          comm_);
  }
  ~PreMulSum() {
    if (comm_ != nullptr) hoopRedOpDestroy(op_, comm_);
  }
  PreMulSum(PreMulSum&& other) noexcept
      : comm_(std::exchange(other.comm_, nullptr)), op_(other.op_) {}
  PreMulSum& operator=(PreMulSum&& other) noexcept {
    if (this != &other) {
      if (comm_ != nullptr) hoopRedOpDestroy(op_, comm_);
      comm_ = std::exchange(other.comm_, nullptr);
      op_ = other.op_;
    }
    return *this;
  }
  PreMulSum(const PreMulSum&) = delete;
  PreMulSum& operator=(const PreMulSum&) = delete;

  hoopRedOp_t op() const { return op_; }
  operator hoopRedOp_t() const { return op_; }

 private:
  hoopComm_t comm_;
  hoopRedOp_t op_ = hoopSum;
};

// Runs `body` between hoopGroupStart and hoopGroupEnd: its sends and receives run together (on
// non-blocking communicators they are queued: hoopInProgress is no failure).
template <typename Body>
void group(Body&& body) {
  check(hoopGroupStart());
  try {
    body();
  } catch (...) {
    hoopGroupEnd();
    throw;
  }
  const hoopResult_t result = hoopGroupEnd();
  if (result != hoopInProgress) check(result);
}

}  // namespace hoop
