#include "core/failure_notice.h"

#include <algorithm>

#include "base/error.h"
#include "base/wire.h"

namespace hoop {
namespace {

constexpr uint32_t kNoticeMagic = 0x4e464f48;  // "HOFN": hoop failure notice
constexpr uint16_t kNoticeVersion = 1;

bool printable(char c) { return c >= 0x20 && c <= 0x7e; }

}  // namespace

bool noticeCarries(hoopResult_t code) {
  return code == hoopRemoteError || code == hoopInvalidUsage;
}

std::string noticeCause(const std::string& message, uint32_t reporter) {
  std::string line = message.substr(0, message.find('\n'));
  const std::string self = str("rank ", reporter, ": ");
  if (line.rfind(self, 0) == 0) line.erase(0, self.size());
  if (line.size() > FailureNotice::kMaxCauseBytes) {
    line.resize(FailureNotice::kMaxCauseBytes - 3);
    line += "...";
  }
  for (char& c : line) {
    if (!printable(c)) c = '?';
  }
  return line.empty() ? "(no message)" : line;
}

std::vector<uint8_t> encodeFailureNotice(const FailureNotice& notice, uint64_t jobTag) {
  WireWriter out;
  out.u32(kNoticeMagic);
  out.u16(kNoticeVersion);
  out.u16(static_cast<uint16_t>(notice.code));
  out.u64(jobTag);
  out.u32(notice.reporter);
  writeOpRecord(out, notice.operation);
  const size_t causeBytes = std::min(notice.cause.size(), FailureNotice::kMaxCauseBytes);
  out.u16(static_cast<uint16_t>(causeBytes));
  out.raw(notice.cause.data(), causeBytes);
  return out.bytes();
}

FailureNotice decodeFailureNotice(const std::vector<uint8_t>& bytes, uint32_t expectedReporter,
                                  uint64_t jobTag) {
  WireReader in(bytes.data(), bytes.size(), "failure notice");
  if (in.u32() != kNoticeMagic) fail(hoopRemoteError, "not a hoop failure notice");
  if (in.u16() != kNoticeVersion) fail(hoopRemoteError, "another hoop failure notice version");
  FailureNotice notice;
  const uint16_t code = in.u16();
  // Compared as a number first: a value outside hoopResult_t is no enum value to convert to.
  if (code != hoopRemoteError && code != hoopInvalidUsage) {
    fail(hoopRemoteError, "failure notice with code ", code);
  }
  notice.code = static_cast<hoopResult_t>(code);
  if (in.u64() != jobTag) fail(hoopRemoteError, "failure notice from another job");
  notice.reporter = in.u32();
  if (notice.reporter != expectedReporter) {
    fail(hoopRemoteError, "failure notice signed by rank ", notice.reporter, " sent by rank ",
         expectedReporter);
  }
  notice.operation = readOpRecord(in);
  const uint16_t causeBytes = in.u16();
  if (causeBytes == 0 || causeBytes > FailureNotice::kMaxCauseBytes ||
      causeBytes != in.remaining()) {
    fail(hoopRemoteError, "failure notice cause of ", causeBytes, " bytes in ", in.remaining());
  }
  notice.cause.resize(causeBytes);
  in.raw(notice.cause.data(), causeBytes);
  for (char c : notice.cause) {
    if (!printable(c)) fail(hoopRemoteError, "failure notice cause holds byte ", int{c} & 0xff);
  }
  return notice;
}

}  // namespace hoop
