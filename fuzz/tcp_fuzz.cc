// Fuzzes what a rank reads from a TCP data connection: the hello a stranger sends to the listening
// port, the status answer a rank reads back after a timeout (first byte 'S'), the failure notice
// a rank takes at its listener (first byte 'N'), and the frames
// (32-byte header + payload) that follow on an established connection. The
// frames go through a real TcpConnection reading from socketpairs, so the header checks, the
// readv into posted buffers and the stream interleaving are the code that runs in a job.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "core/failure_notice.h"
#include "core/rank_status.h"
#include "transport/tcp/hello.h"
#include "transport/tcp/tcp_connection.h"

namespace hoop {
namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

void fuzzHello(const uint8_t* data, size_t size) {
  TcpHello first;
  try {
    first = decodeTcpHello(std::vector<uint8_t>(data, data + size));
  } catch (const Error&) {
    return;
  }
  check(size >= tcpHelloBytes());
  auto bytes = encodeTcpHello(first);
  check(bytes.size() == tcpHelloBytes());
  // The decoder keeps every field (the purpose at offset 10..11 included): an exact round trip.
  for (size_t i = 0; i < bytes.size(); ++i) check(bytes[i] == data[i]);
}

// A status answer (the hang report's): anything the decoder accepts is a well-formed status that
// encodes back to the same bytes, unless its text held bytes it replaced.
void fuzzStatus(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  constexpr uint64_t kJobTag = 0x0123456789abcdefull;
  RankStatus status;
  try {
    status = decodeRankStatus(bytes, 3, kJobTag);
  } catch (const Error&) {
    return;
  }
  check(status.rank == 3 && status.waitingFor.size() <= RankStatus::kMaxWaitingForBytes);
  for (char c : status.waitingFor) check(c >= 0x20 && c <= 0x7e);
  const auto again = encodeRankStatus(status, kJobTag);
  check(again.size() == bytes.size());
  const size_t text = bytes.size() - status.waitingFor.size();
  // The decoder ignores only the reserved bytes (7, 22-23, 38-39).
  for (size_t i = 0; i < text; ++i) {
    check(i == 7 || i == 22 || i == 23 || i == 38 || i == 39 || again[i] == bytes[i]);
  }
}

// A failure notice: anything the decoder accepts is a well-formed notice from the expected rank
// that encodes back to the same bytes (only the operation's reserved bytes 22-23 may differ).
void fuzzNotice(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  constexpr uint64_t kJobTag = 0x0123456789abcdefull;
  FailureNotice notice;
  try {
    notice = decodeFailureNotice(bytes, 3, kJobTag);
  } catch (const Error&) {
    return;
  }
  check(notice.reporter == 3 && noticeCarries(notice.code));
  check(!notice.cause.empty() && notice.cause.size() <= FailureNotice::kMaxCauseBytes);
  for (char c : notice.cause) check(c >= 0x20 && c <= 0x7e);
  const auto again = encodeFailureNotice(notice, kJobTag);
  check(again.size() == bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) check(i == 22 || i == 23 || again[i] == bytes[i]);
}

struct Posted {
  FrameTag tag;
  std::vector<char> buffer;
};

// Input: [layout][4 bytes per posted receive][split (2 bytes, two streams only)][wire bytes].
// layout: receives = 1 + (b % 8), streams = 1 + (b / 8) % 2. A receive: kind, seq, size (u16,
// cut to 4 KiB so a run stays fast).
void fuzzFrames(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const size_t receives = 1 + data[0] % 8;
  const size_t streams = 1 + (data[0] / 8) % 2;
  size_t offset = 1;
  if (size < offset + 4 * receives + 2) return;
  std::vector<Posted> posted(receives);
  for (auto& p : posted) {
    p.tag = {static_cast<OpKind>(data[offset]), data[offset + 1]};
    size_t bytes = (data[offset + 2] | (data[offset + 3] << 8)) % 4097;
    p.buffer.assign(bytes, 0);
    offset += 4;
  }
  size_t split = data[offset] | (data[offset + 1] << 8);
  offset += 2;
  const uint8_t* wire = data + offset;
  const size_t wireBytes = size - offset;
  if (streams == 1 || split > wireBytes) split = wireBytes;

  std::vector<UniqueFd> readers;
  std::vector<std::vector<uint8_t>> sent(streams);
  sent[0].assign(wire, wire + split);
  if (streams == 2) sent[1].assign(wire + split, wire + wireBytes);
  for (size_t s = 0; s < streams; ++s) {
    int pair[2];
    check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    UniqueFd writer(pair[1]);
    readers.emplace_back(pair[0]);
    setNonBlocking(readers.back().get());
    setNonBlocking(writer.get());
    // Whatever does not fit in the socket buffer is cut; the reader then sees the peer close.
    if (!sent[s].empty()) {
      ssize_t wrote = ::send(writer.get(), sent[s].data(), sent[s].size(), MSG_NOSIGNAL);
      sent[s].resize(wrote > 0 ? static_cast<size_t>(wrote) : 0);
    }
  }

  TcpConnection connection(std::move(readers), 0, "the fuzzed peer");
  for (auto& p : posted) connection.postRecv(p.buffer.data(), p.buffer.size(), p.tag);
  try {
    // The writers are closed, so every pass either moves bytes, completes, or throws.
    for (int pass = 0; pass < 100000 && connection.recvsCompleted() < receives; ++pass) {
      connection.progress();
    }
  } catch (const Error&) {
    return;
  }
  check(connection.recvsCompleted() == receives);
  // Accepted frames must be exactly what was posted: the header of message i on stream i %
  // streams says its kind, sequence and size, and the payload landed in the buffer unchanged.
  std::vector<size_t> read(streams, 0);
  for (size_t i = 0; i < receives; ++i) {
    const auto& bytes = sent[i % streams];
    size_t& at = read[i % streams];
    uint8_t expected[FrameHeader::kBytes];
    FrameHeader::encode(expected, posted[i].tag, posted[i].buffer.size());
    check(bytes.size() >= at + FrameHeader::kBytes + posted[i].buffer.size());
    check(std::memcmp(bytes.data() + at, expected, FrameHeader::kBytes) == 0);
    at += FrameHeader::kBytes;
    const auto payload = bytes.begin() + static_cast<ptrdiff_t>(at);
    check(std::equal(posted[i].buffer.begin(), posted[i].buffer.end(), payload,
                     [](char a, uint8_t b) { return static_cast<uint8_t>(a) == b; }));
    at += posted[i].buffer.size();
  }
}

}  // namespace
}  // namespace hoop

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (data[0] == 'S') {
    hoop::fuzzStatus(data + 1, size - 1);
  } else if (data[0] == 'N') {
    hoop::fuzzNotice(data + 1, size - 1);
  } else if (data[0] % 2 == 0) {
    hoop::fuzzHello(data + 1, size - 1);
  } else {
    hoop::fuzzFrames(data + 1, size - 1);
  }
  return 0;
}
