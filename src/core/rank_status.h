// What a rank says about itself when another rank's operation timed out: the operation it is in,
// the one it last completed, and what it waits for. Kept as a few plain values per communicator
// (beginOperation stores them; nothing else runs on the fast path) and put on the wire only when
// asked. The wire format is versioned, little-endian and checked field by field: the bytes come
// from a socket anyone can reach.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/types.h"

namespace hoop {

class WireWriter;
class WireReader;

// One operation, as messages name it: "allreduce #12 (1024 x float)".
struct OpRecord {
  OpKind kind = OpKind::kSetup;
  uint32_t seq = 0;
  uint64_t count = 0;  // 0: the size is not shown
  DataType type = DataType::kInt8;

  // kSetup reads "initialisation"; send/recv groups have no sequence number of their own.
  std::string describe() const;
  bool operator==(const OpRecord&) const = default;
};

struct RankStatus {
  enum class State : uint8_t {
    kWaiting = 0,   // inside an operation, waiting for peers
    kTimedOut = 1,  // its own HOOP_TIMEOUT passed; it is gathering its own report
  };
  uint32_t rank = 0;
  State state = State::kWaiting;
  OpRecord current;
  OpRecord lastCompleted;  // kind kSetup: none yet since initialisation
  std::string waitingFor;  // "data from rank 3 (host b, pid 912)"; cut to kMaxWaitingForBytes

  static constexpr size_t kMaxWaitingForBytes = 512;
};

// An OpRecord's 16 wire bytes (shared with core/failure_notice.h); the reader throws
// hoopRemoteError for an unknown kind or data type.
void writeOpRecord(WireWriter& out, const OpRecord& op);
OpRecord readOpRecord(WireReader& in);

std::vector<uint8_t> encodeRankStatus(const RankStatus& status, uint64_t jobTag);
// Throws hoopRemoteError for anything but the status of rank `expectedRank` in job `jobTag`
// with every field in range; unprintable bytes of the text become '?'.
RankStatus decodeRankStatus(const std::vector<uint8_t>& bytes, uint32_t expectedRank,
                            uint64_t jobTag);

}  // namespace hoop
