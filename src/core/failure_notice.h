// The failure notice: what a rank that found a failure itself (a peer that died, a connection
// lost, a mismatched call read from a header) tells every other rank before it returns its error,
// so that ranks which never exchange data with the culprit still fail at once and name the real
// cause instead of timing out or naming a survivor that gave up first. Pure encoding here; the
// transport half is transport/tcp/notice_wire.h. The bytes come from a socket anyone can reach:
// every field is checked and anything out of range is refused, never repaired.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/rank_status.h"
#include "hoop/hoop.h"

namespace hoop {

struct FailureNotice {
  uint32_t reporter = 0;                // the rank that found the failure
  hoopResult_t code = hoopRemoteError;  // hoopRemoteError (a death) or hoopInvalidUsage
  OpRecord operation;                   // the reporter's operation when it failed
  std::string cause;                    // one printable line: who failed, or both calls

  static constexpr size_t kMaxCauseBytes = 1024;
};

// Whether a failure with this code is one that notices carry.
bool noticeCarries(hoopResult_t code);

// The first line of an error message, without its leading "rank R: " (the notice names the
// reporter itself), unprintable bytes as '?', cut to kMaxCauseBytes.
std::string noticeCause(const std::string& message, uint32_t reporter);

std::vector<uint8_t> encodeFailureNotice(const FailureNotice& notice, uint64_t jobTag);
// Throws hoopRemoteError for anything but a notice from rank `expectedReporter` of job `jobTag`
// with a code notices carry, a known operation and a non-empty printable cause.
FailureNotice decodeFailureNotice(const std::vector<uint8_t>& bytes, uint32_t expectedReporter,
                                  uint64_t jobTag);

}  // namespace hoop
