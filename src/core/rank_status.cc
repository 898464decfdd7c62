#include "core/rank_status.h"

#include <algorithm>

#include "base/error.h"
#include "base/wire.h"

namespace hoop {
namespace {

constexpr uint32_t kStatusMagic = 0x54534f48;  // "HOST": hoop status
constexpr uint16_t kStatusVersion = 1;

bool knownKind(uint8_t kind) {
  return kind >= static_cast<uint8_t>(OpKind::kAllReduce) &&
         kind <= static_cast<uint8_t>(OpKind::kSetAlgorithms);
}

}  // namespace

void writeOpRecord(WireWriter& out, const OpRecord& op) {
  out.u8(static_cast<uint8_t>(op.kind));
  out.u8(static_cast<uint8_t>(op.type));
  out.u16(0);
  out.u32(op.seq);
  out.u64(op.count);
}

OpRecord readOpRecord(WireReader& in) {
  OpRecord op;
  const uint8_t kind = in.u8();
  const uint8_t type = in.u8();
  in.u16();
  if (!knownKind(kind)) fail(hoopRemoteError, "status names unknown operation kind ", int{kind});
  if (type >= kNumDataTypes) fail(hoopRemoteError, "status names unknown data type ", int{type});
  op.kind = static_cast<OpKind>(kind);
  op.type = static_cast<DataType>(type);
  op.seq = in.u32();
  op.count = in.u64();
  return op;
}

std::string OpRecord::describe() const {
  if (kind == OpKind::kSetup) return "initialisation";
  std::string text(opKindName(kind));
  if (kind != OpKind::kSendRecv) text += str(" #", seq);
  if (count > 0) text += str(" (", count, " x ", dataTypeName(type), ")");
  return text;
}

std::vector<uint8_t> encodeRankStatus(const RankStatus& status, uint64_t jobTag) {
  WireWriter out;
  out.u32(kStatusMagic);
  out.u16(kStatusVersion);
  out.u8(static_cast<uint8_t>(status.state));
  out.u8(0);
  out.u64(jobTag);
  out.u32(status.rank);
  writeOpRecord(out, status.current);
  writeOpRecord(out, status.lastCompleted);
  const size_t textBytes = std::min(status.waitingFor.size(), RankStatus::kMaxWaitingForBytes);
  out.u16(static_cast<uint16_t>(textBytes));
  out.raw(status.waitingFor.data(), textBytes);
  return out.bytes();
}

RankStatus decodeRankStatus(const std::vector<uint8_t>& bytes, uint32_t expectedRank,
                            uint64_t jobTag) {
  WireReader in(bytes.data(), bytes.size(), "status answer");
  if (in.u32() != kStatusMagic) fail(hoopRemoteError, "not a hoop status answer");
  if (in.u16() != kStatusVersion) fail(hoopRemoteError, "another hoop status version");
  RankStatus status;
  const uint8_t state = in.u8();
  in.u8();
  if (state > static_cast<uint8_t>(RankStatus::State::kTimedOut)) {
    fail(hoopRemoteError, "status names unknown state ", int{state});
  }
  status.state = static_cast<RankStatus::State>(state);
  if (in.u64() != jobTag) fail(hoopRemoteError, "status answer from another job");
  status.rank = in.u32();
  if (status.rank != expectedRank) {
    fail(hoopRemoteError, "status answer from rank ", status.rank, ", asked rank ", expectedRank);
  }
  status.current = readOpRecord(in);
  status.lastCompleted = readOpRecord(in);
  const uint16_t textBytes = in.u16();
  if (textBytes > RankStatus::kMaxWaitingForBytes || textBytes != in.remaining()) {
    fail(hoopRemoteError, "status answer text of ", textBytes, " bytes in ", in.remaining());
  }
  status.waitingFor.resize(textBytes);
  in.raw(status.waitingFor.data(), textBytes);
  for (char& c : status.waitingFor) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return status;
}

}  // namespace hoop
