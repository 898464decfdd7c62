#include "transport/tcp/tcp_connection.h"

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/wire.h"

namespace hoop {

void FrameHeader::encode(uint8_t* out, FrameTag tag, uint64_t bytes) {
  WireWriter header;
  header.u16(kMagic);
  header.u8(kVersion);
  header.u8(static_cast<uint8_t>(tag.kind));
  header.u32(tag.seq);
  header.u64(bytes);
  header.u64(tag.call.count);
  header.u8(tag.call.type);
  header.u8(tag.call.op);
  header.u16(0);
  header.u32(tag.call.root);
  std::memcpy(out, header.bytes().data(), kBytes);
}

FrameHeader::Decoded FrameHeader::decode(const uint8_t* in) {
  WireReader header(in, kBytes, "frame header");
  const uint16_t magic = header.u16();
  const uint8_t version = header.u8();
  Decoded frame;
  frame.tag.kind = static_cast<OpKind>(header.u8());
  frame.tag.seq = header.u32();
  frame.bytes = header.u64();
  frame.tag.call.count = header.u64();
  frame.tag.call.type = header.u8();
  frame.tag.call.op = header.u8();
  const uint16_t reserved = header.u16();
  frame.tag.call.root = header.u32();
  frame.wellFormed = magic == kMagic && version == kVersion && reserved == 0;
  return frame;
}

TcpConnection::TcpConnection(std::vector<UniqueFd> streams, int selfRank, std::string describePeer)
    : selfRank_(selfRank), peer_(std::move(describePeer)) {
  for (size_t i = 0; i < streams.size(); ++i) {
    Stream stream;
    stream.fd = std::move(streams[i]);
    stream.nextSend = i;
    stream.nextRecv = i;
    streams_.push_back(std::move(stream));
  }
}

void TcpConnection::Direction::finish(Message& m) {
  m.done = true;
  // Completion is reported in ticket order even though streams finish out of order.
  while (completed < posted && at(completed).done) ++completed;
}

uint64_t TcpConnection::postSend(const void* data, size_t bytes, FrameTag tag) {
  if (sends_.posted - sends_.completed >= kMaxInFlight) {
    fail(hoopInternalError, "rank ", selfRank_, ": too many sends in flight to ", peer_);
  }
  Message& m = sends_.at(sends_.posted);
  m = Message{};
  // The connection never writes through this pointer on the send side.
  m.data = const_cast<char*>(static_cast<const char*>(data));
  m.bytes = bytes;
  m.tag = tag;
  m.ticket = sends_.posted;
  FrameHeader::encode(m.header.data(), tag, bytes);
  return sends_.posted++;
}

uint64_t TcpConnection::postRecv(void* data, size_t bytes, FrameTag tag) {
  if (recvs_.posted - recvs_.completed >= kMaxInFlight) {
    fail(hoopInternalError, "rank ", selfRank_, ": too many receives in flight from ", peer_);
  }
  Message& m = recvs_.at(recvs_.posted);
  m = Message{};
  m.data = static_cast<char*>(data);
  m.bytes = bytes;
  m.tag = tag;
  m.ticket = recvs_.posted;
  return recvs_.posted++;
}

bool TcpConnection::progress() {
  bool moved = false;
  for (size_t s = 0; s < streams_.size(); ++s) {
    moved |= progressSends(s);
    moved |= progressRecvs(s);
  }
  return moved;
}

bool TcpConnection::progressSends(size_t streamIndex) {
  Stream& stream = streams_[streamIndex];
  const uint64_t stride = streams_.size();
  bool moved = false;
  while (stream.nextSend < sends_.posted) {
    // Gather this stream's pending frames into one sendmsg: many small frames cost one call.
    constexpr size_t kMaxBatch = 32;
    iovec iov[2 * kMaxBatch];
    size_t count = 0;
    size_t offered = 0;
    for (uint64_t t = stream.nextSend; t < sends_.posted && count + 2 <= 2 * kMaxBatch;
         t += stride) {
      Message& m = sends_.at(t);
      if (m.moved < FrameHeader::kBytes) {
        iov[count++] = {m.header.data() + m.moved, FrameHeader::kBytes - m.moved};
        if (m.bytes > 0) iov[count++] = {m.data, m.bytes};
      } else {
        size_t payloadDone = m.moved - FrameHeader::kBytes;
        iov[count++] = {m.data + payloadDone, m.bytes - payloadDone};
      }
      offered += FrameHeader::kBytes + m.bytes - m.moved;
    }
    msghdr header{};
    header.msg_iov = iov;
    header.msg_iovlen = count;
    ssize_t sent = ::sendmsg(stream.fd.get(), &header, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return moved;
      failIo("sending", sends_.at(stream.nextSend).tag, "to", errno);
    }
    moved = true;
    // Credit the bytes the kernel took to the frames in order.
    size_t left = static_cast<size_t>(sent);
    while (left > 0) {
      Message& m = sends_.at(stream.nextSend);
      size_t take = std::min(FrameHeader::kBytes + m.bytes - m.moved, left);
      m.moved += take;
      left -= take;
      if (m.moved == FrameHeader::kBytes + m.bytes) {
        sends_.finish(m);
        stream.nextSend += stride;
      }
    }
    if (static_cast<size_t>(sent) < offered) return moved;  // the socket buffer is full
  }
  return moved;
}

bool TcpConnection::progressRecvs(size_t streamIndex) {
  Stream& stream = streams_[streamIndex];
  const uint64_t stride = streams_.size();
  bool moved = false;
  while (stream.nextRecv < recvs_.posted) {
    Message& m = recvs_.at(stream.nextRecv);
    iovec iov[2];
    size_t count = 0;
    if (m.moved < FrameHeader::kBytes) {
      iov[count++] = {m.header.data() + m.moved, FrameHeader::kBytes - m.moved};
      if (m.bytes > 0) iov[count++] = {m.data, m.bytes};
    } else {
      iov[count++] = {m.data + (m.moved - FrameHeader::kBytes),
                      m.bytes - (m.moved - FrameHeader::kBytes)};
    }
    ssize_t got = ::readv(stream.fd.get(), iov, static_cast<int>(count));
    if (got == 0) failIo("receiving", m.tag, "from", 0);
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return moved;
      failIo("receiving", m.tag, "from", errno);
    }
    moved = true;
    bool headerWasIncomplete = m.moved < FrameHeader::kBytes;
    m.moved += static_cast<size_t>(got);
    if (headerWasIncomplete && m.moved >= FrameHeader::kBytes) checkHeader(m);
    if (m.moved < FrameHeader::kBytes + m.bytes) return moved;  // the rest is not here yet
    recvs_.finish(m);
    stream.nextRecv += stride;
  }
  return moved;
}

std::optional<FrameTag> TcpConnection::peekUnclaimed() {
  if (recvs_.completed != recvs_.posted) return std::nullopt;  // a receive claims what comes
  // The next message arrives on the stream of the next ticket.
  Stream& stream = streams_[recvs_.posted % streams_.size()];
  std::array<uint8_t, FrameHeader::kBytes> header;
  const ssize_t got =
      ::recv(stream.fd.get(), header.data(), header.size(), MSG_PEEK | MSG_DONTWAIT);
  if (got != static_cast<ssize_t>(header.size())) return std::nullopt;
  const FrameHeader::Decoded frame = FrameHeader::decode(header.data());
  // Garbage is for the receive that claims it to report, with its checks.
  if (!frame.wellFormed) return std::nullopt;
  return frame.tag;
}

void TcpConnection::checkHeader(const Message& m) const {
  const FrameHeader::Decoded frame = FrameHeader::decode(m.header.data());
  if (!frame.wellFormed) {
    fail(hoopRemoteError, "rank ", selfRank_, ": garbage on the connection from ", peer_,
         " (bad frame magic/version/reserved bytes) during ", opKindName(m.tag.kind), " #",
         m.tag.seq, "; the connection is unusable");
  }
  const OpKind kind = frame.tag.kind;
  const uint32_t seq = frame.tag.seq;
  const CallParams& call = frame.tag.call;
  const uint64_t bytes = frame.bytes;
  if (kind != m.tag.kind || seq != m.tag.seq) {
    fail(hoopInvalidUsage, "rank ", selfRank_, " is in ", opKindName(m.tag.kind), " #", m.tag.seq,
         " but ", peer_, " sent data for ", opKindName(kind), " #", seq,
         ": ranks called collectives in a different order");
  }
  if (call != m.tag.call) {
    fail(hoopInvalidUsage, "rank ", selfRank_, " called ", describeCall(kind, seq, m.tag.call),
         " but ", peer_, " called ", describeCall(kind, seq, call),
         ": every rank must make the same call with the same count, type, op and root");
  }
  if (bytes != m.bytes) {
    fail(hoopInvalidUsage, "rank ", selfRank_, " expected ", m.bytes, " bytes from ", peer_, " in ",
         opKindName(m.tag.kind), " #", m.tag.seq, " but got ", bytes,
         ": ranks passed different counts or datatypes");
  }
}

void TcpConnection::failIo(const char* verb, FrameTag tag, const char* preposition,
                           int errnum) const {
  // The frame in flight names the operation: "receiving allreduce #453 data from rank 1 (...)".
  const std::string what = tag.kind == OpKind::kSetup ? std::string(opKindName(tag.kind))
                                                      : str(opKindName(tag.kind), " #", tag.seq);
  fail(hoopRemoteError, "rank ", selfRank_, ": connection lost ", verb, " ", what, " data ",
       preposition, " ", peer_,
       errnum == 0 ? std::string(": the peer closed it (did it exit or fail?)")
                   : ": " + errnoText(errnum));
}

void TcpConnection::addWaitFds(std::vector<pollfd>& fds) {
  for (const Stream& stream : streams_) {
    short events = 0;
    if (stream.nextSend < sends_.posted) events |= POLLOUT;
    if (stream.nextRecv < recvs_.posted) events |= POLLIN;
    if (events != 0) fds.push_back({stream.fd.get(), events, 0});
  }
}

}  // namespace hoop
