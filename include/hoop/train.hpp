// hoop's training engine: Horovod-style named, asynchronous collectives over one communicator.
//
// A background thread runs a cycle every EngineOptions::cycleTimeMs. In each cycle the ranks agree
// which named requests every rank has submitted, then run them in one order that is the same on
// every rank, so ranks may submit names in any order without deadlocking. Requests that have been
// agreed once are remembered (the response cache): later cycles agree on them with one small
// allreduce of one byte per cached name instead of exchanging names. Ready allreduces with the same
// element type, operation and scale factors are packed into one fusion buffer and reduced with one
// hoopAllReduce.
//
//   auto comm = hoop::Communicator::fromEnvironment();
//   hoop::train::Engine engine(comm.handle());
//   auto h = engine.allReduce("grad.w1", grad, grad, n, hoopFloat32, hoopAvg);
//   engine.wait(h);  // throws hoop::Exception naming the tensor, the operation and the rank(s)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hoop/hoop.h"
#include "hoop/hoop.hpp"

// libhoop exports only its C API by default; the training API is exported explicitly.
#define HOOP_TRAIN_API __attribute__((visibility("default")))

namespace hoop::train {

struct HOOP_TRAIN_API EngineOptions {
  // Ready allreduces are packed together up to this many bytes (HOOP_FUSION_THRESHOLD, bytes;
  // 0 turns fusion off).
  size_t fusionThresholdBytes = size_t{128} << 20;
  // Time between the starts of two negotiation cycles (HOOP_CYCLE_TIME, milliseconds).
  double cycleTimeMs = 1.0;
  // A name that some ranks submitted and others did not is first warned about after half this
  // time, then failed on every rank with an error naming the tensor and the missing ranks
  // (HOOP_STALL_CHECK_TIME, seconds; 0 turns the check off, and a missing rank then means waiting
  // until it submits).
  double stallTimeoutSeconds = 60.0;
  // At most this many names are remembered by the response cache (HOOP_CACHE_CAPACITY; 0 turns the
  // cache off, so every request is negotiated by name).
  size_t cacheCapacity = 1024;

  // The defaults above, overridden by the environment variables named beside each field.
  static EngineOptions fromEnvironment();
};

// Counters since the engine started, for tests and debugging.
struct HOOP_TRAIN_API EngineStats {
  size_t cycles = 0;             // negotiation cycles run
  size_t negotiationRounds = 0;  // cycles that had to exchange names (something was not cached)
  size_t cacheHits = 0;          // requests agreed through the response cache
  size_t collectiveCalls = 0;    // data collectives issued (one per fused group)
  size_t fusedTensors = 0;       // allreduces that shared a collective call with another
  size_t largestFusedBytes = 0;  // the largest fusion buffer reduced in one call
  size_t completedRequests = 0;  // requests finished successfully
  size_t failedRequests = 0;     // requests finished with an error
};

// Background coordinator over one communicator. The communicator is borrowed: it must outlive the
// engine, and while the engine lives it must be the communicator's only user (its thread issues
// collectives on it). Every rank of the communicator creates its engine (collectively) with the
// same fusion threshold and cache capacity: the constructor checks, and throws on every rank when
// they differ.
class HOOP_TRAIN_API Engine {
 public:
  using Handle = uint64_t;
  using Stats = EngineStats;

  explicit Engine(hoopComm_t comm, EngineOptions options = EngineOptions::fromEnvironment());
  // Collective: the thread stops in the same cycle on every rank once every rank has started its
  // destructor. Work that every rank submitted runs first; anything still waiting for another
  // rank fails with an error naming it.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // All requests are named; a name may be in flight only once per rank at a time (submitting it
  // again before it completes throws hoop::Exception). Buffers are host memory and must stay valid
  // and untouched until the request completes. Ranks may submit names in different orders.

  // recv = op over ranks of (prescale * send), then * postscale. In place when send == recv.
  // op: hoopSum, hoopAvg, hoopMin, hoopMax, hoopProd. Scale factors other than 1 need a
  // floating-point type (Horovod's gradient predivide uses them).
  Handle allReduce(std::string name, const void* send, void* recv, size_t count,
                   hoopDataType_t type, hoopRedOp_t op = hoopSum, double prescale = 1.0,
                   double postscale = 1.0);
  // Horovod's grouped_allreduce: the requests reach this rank's engine together, so once every
  // rank submitted the group they are agreed in one cycle and fused together (up to the
  // threshold, in this order). One handle per request, in the same order. Nothing is submitted
  // when one request is invalid (the exception says which).
  struct AllReduceRequest {
    std::string name;
    const void* send;
    void* recv;
    size_t count;
    hoopDataType_t type;
  };
  std::vector<Handle> groupedAllReduce(std::vector<AllReduceRequest> requests,
                                       hoopRedOp_t op = hoopSum, double prescale = 1.0,
                                       double postscale = 1.0);
  // root's data is copied into data on every rank.
  Handle broadcast(std::string name, void* data, size_t count, hoopDataType_t type, int root);
  // Each rank contributes `count` elements (counts may differ between ranks). Once every rank's
  // count is known, `allocate(perRankCounts)` is called on the engine's thread and returns room for
  // their sum; the result holds rank 0's elements, then rank 1's, and so on.
  using Allocator = std::function<void*(const std::vector<size_t>& perRankCounts)>;
  using AllGatherAllocator = Allocator;
  Handle allGather(std::string name, const void* send, size_t count, hoopDataType_t type,
                   AllGatherAllocator allocate);
  // send holds size() blocks of countPerRank elements; block j goes to rank j, and block i of recv
  // comes from rank i.
  Handle allToAll(std::string name, const void* send, void* recv, size_t countPerRank,
                  hoopDataType_t type);
  // Uneven all-to-all: sendCounts[j] elements go to rank j (send holds them back to back, rank 0's
  // first). Once every rank's counts are known, `allocate(recvCounts)` is called on the engine's
  // thread and returns room for their sum; the elements from rank i follow those from rank i - 1.
  Handle allToAll(std::string name, const void* send, std::vector<size_t> sendCounts,
                  hoopDataType_t type, Allocator allocate);
  // send holds size() blocks of recvCount elements; rank r receives block r reduced over ranks.
  Handle reduceScatter(std::string name, const void* send, void* recv, size_t recvCount,
                       hoopDataType_t type, hoopRedOp_t op = hoopSum);
  // Completes once every rank has submitted `name`.
  Handle barrier(std::string name);

  // Horovod's join(): this rank has no more data. Until every rank has joined, this rank takes part
  // in the others' requests with zeros (allreduce, reduce-scatter, all-to-all), nothing (allgather
  // and uneven all-to-all get no elements from it) or a scratch buffer (broadcast from another
  // rank; a broadcast from a root that joined fails on every rank), so uneven numbers
  // of steps per rank do not deadlock. Blocks until every rank has joined; returns the last rank
  // to join (the highest one when several joined in the same cycle). Collective. A rank whose
  // engine is being destroyed counts as joined here, but contributes nothing: names it never
  // submits stall on the others instead of silently getting its zeros.
  int join();

  // Calls `callback(code, message)` once the request finished (code hoopSuccess and an empty
  // message on success) and releases the handle: it belongs to the callback from then on, and
  // wait() or synchronize() no longer report it. The callback runs on the engine's thread, or at
  // once on the calling thread when the request already finished; it must return quickly and
  // never wait for the engine (submitting new requests is fine). This is how an asynchronous
  // framework kernel completes without a thread blocked in wait() per request.
  using Callback = std::function<void(hoopResult_t code, const std::string& message)>;
  void whenDone(Handle handle, Callback callback);

  // True once the request finished, successfully or not. Does not release the handle.
  bool poll(Handle handle);
  // Blocks until the request finished and releases the handle; throws hoop::Exception naming the
  // tensor, the operation and the rank(s) when it failed. A handle already released returns at
  // once (synchronize() releases only successful requests, so nothing failed goes unreported).
  void wait(Handle handle);
  // Waits until every request this rank submitted so far finished. Releases the successful ones;
  // failed ones stay for their own wait(), and the first failure not yet reported by an earlier
  // synchronize() is thrown.
  void synchronize();

  Stats stats() const;
  int rank() const;
  int size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Gradient buffers registered once by name. Each step, ready(name) as each gradient is produced (in
// any order, which may differ between ranks); synchronize() reduces in place whatever was not
// marked ready, waits until every registered buffer is reduced, and starts the next step. Destroy
// it before its engine (its destructor waits for reductions still in flight).
class HOOP_TRAIN_API GradientReducer {
 public:
  // Scale factors as in Engine::allReduce (e.g. op hoopSum with postscale 1/size averages).
  explicit GradientReducer(Engine& engine, hoopRedOp_t op = hoopAvg, double prescale = 1.0,
                           double postscale = 1.0);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Registered names must be the same set on every rank; a name is registered once.
  void registerBuffer(std::string name, void* data, size_t count, hoopDataType_t type);
  // Starts the reduction of `name`; a second ready() of a name in one step throws.
  void ready(const std::string& name);
  // Throws hoop::Exception for a failed reduction (after all of them finished).
  void synchronize();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A named buffer for broadcastParameters.
struct NamedBuffer {
  std::string name;
  void* data;
  size_t count;
  hoopDataType_t type;
};

// Copies root's buffers to every rank, through the engine (while one runs on the communicator).
HOOP_TRAIN_API void broadcastParameters(Engine& engine, std::span<const NamedBuffer> buffers,
                                        int root);
// The same directly on a communicator that no engine is using.
HOOP_TRAIN_API void broadcastParameters(hoopComm_t comm, std::span<const NamedBuffer> buffers,
                                        int root);

}  // namespace hoop::train
