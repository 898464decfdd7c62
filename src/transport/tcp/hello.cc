#include "transport/tcp/hello.h"

#include "base/error.h"
#include "base/wire.h"

namespace hoop {
namespace {

constexpr uint32_t kHelloMagic = 0x43504f48;  // "HOPC"
constexpr uint16_t kHelloVersion = 1;

}  // namespace

std::vector<uint8_t> encodeTcpHello(const TcpHello& h) {
  WireWriter out;
  out.u32(kHelloMagic);
  out.u16(kHelloVersion);
  out.u16(h.streams);
  out.u16(h.streamIndex);
  out.u16(static_cast<uint16_t>(h.purpose));
  out.raw(h.secret.bytes.data(), h.secret.bytes.size());
  out.u64(h.jobTag);
  out.u32(h.fromRank);
  out.u32(h.toRank);
  return out.bytes();
}

size_t tcpHelloBytes() {
  static const size_t bytes = encodeTcpHello(TcpHello{}).size();
  return bytes;
}

TcpHello decodeTcpHello(const std::vector<uint8_t>& bytes) {
  WireReader in(bytes.data(), bytes.size(), "connection hello");
  if (in.u32() != kHelloMagic) fail(hoopRemoteError, "not a hoop connection");
  if (in.u16() != kHelloVersion) fail(hoopRemoteError, "another hoop wire version");
  TcpHello h;
  h.streams = in.u16();
  h.streamIndex = in.u16();
  // Was a reserved zero before status queries existed, so old data hellos still read as data.
  const uint16_t purpose = in.u16();
  if (purpose > static_cast<uint16_t>(HelloPurpose::kFailureNotice)) {
    fail(hoopRemoteError, "unknown connection purpose ", purpose);
  }
  h.purpose = static_cast<HelloPurpose>(purpose);
  in.raw(h.secret.bytes.data(), h.secret.bytes.size());
  h.jobTag = in.u64();
  h.fromRank = in.u32();
  h.toRank = in.u32();
  return h;
}

std::string helloRefusal(const TcpHello& hello, const Secret& secret, uint64_t jobTag, int selfRank,
                         size_t nranks) {
  if (!hello.secret.matches(secret) || hello.jobTag != jobTag) {
    return "it did not present this job's secret";
  }
  if (hello.toRank != static_cast<uint32_t>(selfRank)) {
    return str("it was meant for rank ", hello.toRank);
  }
  if (hello.fromRank >= nranks || hello.fromRank == static_cast<uint32_t>(selfRank)) {
    return str("it claims to be rank ", hello.fromRank);
  }
  return "";
}

}  // namespace hoop
