// A Connection over one or more TCP sockets (streams). Message i in a direction travels on
// stream i % streams, so both ends agree on placement without negotiating per message, and a
// large transfer split into pieces by the algorithm uses every stream at once.
//
// Each message is one frame: a 32-byte header (magic, version, op kind, sequence, length, and
// the call's count, type, op and root) and
// the payload. The header goes out in the same sendmsg as the payload, and the receiver reads
// header and payload with one readv straight into the posted buffer: no staging copy, no
// rendezvous round trip for small messages.
#pragma once

#include <sys/uio.h>

#include <array>
#include <string>
#include <vector>

#include "transport/connection.h"
#include "transport/tcp/socket.h"

namespace hoop {

struct FrameHeader {
  static constexpr size_t kBytes = 32;
  static constexpr uint16_t kMagic = 0x4f48;  // "HO"
  static constexpr uint8_t kVersion = 2;

  static void encode(uint8_t* out, FrameTag tag, uint64_t bytes);

  // What a header of kBytes says. `wellFormed` is false for a wrong magic or version or non-zero
  // reserved bytes, and then the other fields mean nothing.
  struct Decoded {
    bool wellFormed = false;
    FrameTag tag{};
    uint64_t bytes = 0;
  };
  static Decoded decode(const uint8_t* in);
};

class TcpConnection : public Connection {
 public:
  // `describePeer` and `selfRank` name both ends in errors.
  TcpConnection(std::vector<UniqueFd> streams, int selfRank, std::string describePeer);

  uint64_t postSend(const void* data, size_t bytes, FrameTag tag) override;
  uint64_t postRecv(void* data, size_t bytes, FrameTag tag) override;
  uint64_t sendsCompleted() const override { return sends_.completed; }
  uint64_t recvsCompleted() const override { return recvs_.completed; }
  uint64_t sendsPosted() const override { return sends_.posted; }
  uint64_t recvsPosted() const override { return recvs_.posted; }
  size_t maxInFlight() const override { return kMaxInFlight; }
  bool progress() override;
  std::optional<FrameTag> peekUnclaimed() override;
  void addWaitFds(std::vector<pollfd>& fds) override;

  size_t streamCount() const { return streams_.size(); }
  // A stream's socket, for a transport that keeps the pair's link idle and watches it for the
  // peer's end (its process's exit closes it).
  int streamFd(size_t index) const { return streams_[index].fd.get(); }

 private:
  static constexpr size_t kMaxInFlight = 256;

  struct Message {
    char* data = nullptr;
    size_t bytes = 0;
    size_t moved = 0;  // header + payload bytes moved so far
    FrameTag tag{};
    uint64_t ticket = 0;
    std::array<uint8_t, FrameHeader::kBytes> header{};
    bool done = false;
  };

  // Messages of one direction in ticket order, in a ring of kMaxInFlight slots (allocated once).
  struct Direction {
    std::vector<Message> ring = std::vector<Message>(kMaxInFlight);
    uint64_t posted = 0;
    uint64_t completed = 0;
    Message& at(uint64_t ticket) { return ring[ticket % kMaxInFlight]; }
    void finish(Message& m);
  };

  struct Stream {
    UniqueFd fd;
    // Tickets of this stream's messages not yet finished, oldest first. Tickets of one stream
    // are `index + k * streams`, so the next one is derived, not stored.
    uint64_t nextSend = 0;
    uint64_t nextRecv = 0;
  };

  bool progressSends(size_t streamIndex);
  bool progressRecvs(size_t streamIndex);
  void checkHeader(const Message& m) const;
  [[noreturn]] void failIo(const char* verb, FrameTag tag, const char* preposition,
                           int errnum) const;

  std::vector<Stream> streams_;
  int selfRank_;
  std::string peer_;
  Direction sends_;
  Direction recvs_;
};

}  // namespace hoop
