// Runs one cycle's responses on this rank, in the agreed order: allreduces with the same type,
// operation and scale factors share a fusion buffer up to the threshold and one hoopAllReduce;
// everything else is one collective each. A rank that joined and lacks a request takes part with
// zeros (or a scratch buffer) so the others' collectives complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hoop/hoop.h"
#include "train/coordinator.h"
#include "train/local_request.h"

namespace hoop::train {

struct ExecutionCounters {
  size_t collectiveCalls = 0;
  size_t fusedTensors = 0;
  size_t largestFusedBytes = 0;
};

class ResponseExecutor {
 public:
  // A name's local request, or nullptr when this rank did not submit it (it joined).
  using FindRequest = std::function<LocalRequest*(const std::string& name)>;
  // Called once per local request the cycle finished; message is empty on success.
  using Finish =
      std::function<void(LocalRequest& request, hoopResult_t code, const std::string& message)>;

  ResponseExecutor(hoopComm_t comm, int rank, int nranks, size_t fusionThresholdBytes);

  // Throws hoop::Exception when a collective fails: the communicator is then unusable, and the
  // caller fails everything still outstanding.
  void run(const std::vector<Response>& responses, const FindRequest& find, const Finish& finish,
           ExecutionCounters& counters);

 private:
  struct FusionKey {
    hoopDataType_t type;
    hoopRedOp_t op;
    double prescale;
    double postscale;
    bool operator==(const FusionKey&) const = default;
  };
  struct Bucket {
    FusionKey key;
    std::vector<std::pair<const Response*, LocalRequest*>> members;
    size_t bytes = 0;
  };

  void runAlone(const Response& response, LocalRequest* request, const Finish& finish,
                ExecutionCounters& counters);
  void runAllReduce(const RequestShape& shape, LocalRequest* request);
  void runFused(const Bucket& bucket, const Finish& finish, ExecutionCounters& counters);
  // Returns an error for this rank alone (its allocator failed); the collective itself ran.
  std::string runAllGather(const Response& response, LocalRequest* request);
  std::string runAllToAllv(const Response& response, LocalRequest* request);
  // The allocator's memory for `counts`, or an error for this rank alone.
  static std::string allocateOutput(const Response& response, LocalRequest& request,
                                    const std::vector<size_t>& counts, void*& out);
  // Zeroed scratch of at least `bytes`, for ranks that joined.
  void* scratch(size_t bytes, int which = 0);
  void check(hoopResult_t result, const std::string& what) const;

  hoopComm_t comm_;
  int rank_;
  int nranks_;
  size_t fusionThresholdBytes_;
  std::vector<uint64_t> fusionBuffer_;  // uint64_t: aligned for every element type
  std::vector<uint64_t> scratch_[2];
};

}  // namespace hoop::train
