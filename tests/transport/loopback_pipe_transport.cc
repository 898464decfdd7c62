#include "loopback_pipe_transport.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>

#include "base/error.h"
#include "base/unique_fd.h"

namespace hoop::test {
namespace {

// Each message: this header, then its bytes.
struct PipeHeader {
  uint32_t kind;
  uint32_t seq;
  uint64_t bytes;
};

class PipeConnection final : public Connection {
 public:
  PipeConnection(UniqueFd in, UniqueFd out, std::string peerName)
      : in_(std::move(in)), out_(std::move(out)), peerName_(std::move(peerName)) {}

  uint64_t postSend(const void* data, size_t bytes, FrameTag tag) override {
    Outgoing message;
    message.header = {static_cast<uint32_t>(tag.kind), tag.seq, bytes};
    message.data = static_cast<const char*>(data);
    sends_.push_back(message);
    return sendsPosted_++;
  }
  uint64_t postRecv(void* data, size_t bytes, FrameTag tag) override {
    recvs_.push_back({static_cast<char*>(data), bytes, tag});
    return recvsPosted_++;
  }
  uint64_t sendsCompleted() const override { return sendsPosted_ - sends_.size(); }
  uint64_t recvsCompleted() const override { return recvsPosted_ - recvs_.size(); }
  uint64_t sendsPosted() const override { return sendsPosted_; }
  uint64_t recvsPosted() const override { return recvsPosted_; }
  size_t maxInFlight() const override { return 64; }

  bool progress() override {
    bool moved = false;
    while (!sends_.empty() && writeSome(sends_.front())) {
      sends_.pop_front();
      moved = true;
    }
    if (!sends_.empty() && sends_.front().done > 0) moved = true;
    while (!recvs_.empty() && readSome(recvs_.front(), moved)) recvs_.pop_front();
    return moved;
  }

  void addWaitFds(std::vector<pollfd>& fds) override {
    if (!recvs_.empty()) fds.push_back({in_.get(), POLLIN, 0});
    if (!sends_.empty()) fds.push_back({out_.get(), POLLOUT, 0});
  }

 private:
  struct Outgoing {
    PipeHeader header;
    const char* data = nullptr;
    size_t done = 0;  // of sizeof(header) + header.bytes
  };
  struct Incoming {
    char* data;
    size_t bytes;
    FrameTag tag;
    PipeHeader header{};
    size_t done = 0;
  };

  // Writes what the pipe takes now; true once the whole message is out.
  bool writeSome(Outgoing& message) {
    const size_t total = sizeof(PipeHeader) + message.header.bytes;
    while (message.done < total) {
      const bool inHeader = message.done < sizeof(PipeHeader);
      const char* from = inHeader ? reinterpret_cast<const char*>(&message.header) + message.done
                                  : message.data + (message.done - sizeof(PipeHeader));
      const size_t left = inHeader ? sizeof(PipeHeader) - message.done : total - message.done;
      const ssize_t written = ::write(out_.get(), from, left);
      if (written < 0) {
        if (errno == EAGAIN || errno == EINTR) return false;
        fail(hoopRemoteError, "pipe to ", peerName_, ": ", std::strerror(errno));
      }
      message.done += static_cast<size_t>(written);
    }
    return true;
  }

  // Reads what has arrived for the oldest receive; true once it is complete.
  bool readSome(Incoming& message, bool& moved) {
    while (message.done < sizeof(PipeHeader) + message.bytes) {
      const bool inHeader = message.done < sizeof(PipeHeader);
      char* to = inHeader ? reinterpret_cast<char*>(&message.header) + message.done
                          : message.data + (message.done - sizeof(PipeHeader));
      const size_t left = inHeader ? sizeof(PipeHeader) - message.done
                                   : sizeof(PipeHeader) + message.bytes - message.done;
      const ssize_t got = ::read(in_.get(), to, left);
      if (got == 0) fail(hoopRemoteError, "pipe from ", peerName_, " closed");
      if (got < 0) {
        if (errno == EAGAIN || errno == EINTR) return false;
        fail(hoopRemoteError, "pipe from ", peerName_, ": ", std::strerror(errno));
      }
      moved = true;
      message.done += static_cast<size_t>(got);
      if (message.done == sizeof(PipeHeader)) checkHeader(message);
    }
    return true;
  }

  void checkHeader(const Incoming& message) const {
    const PipeHeader& h = message.header;
    if (h.kind != static_cast<uint32_t>(message.tag.kind) || h.seq != message.tag.seq ||
        h.bytes != message.bytes) {
      fail(hoopInvalidUsage, "pipe from ", peerName_, ": got a message of ", h.bytes,
           " bytes for operation ", h.seq, ", expected ", message.bytes, " bytes for ",
           message.tag.seq);
    }
  }

  UniqueFd in_;
  UniqueFd out_;
  std::string peerName_;
  std::deque<Outgoing> sends_;
  std::deque<Incoming> recvs_;
  uint64_t sendsPosted_ = 0;
  uint64_t recvsPosted_ = 0;
};

UniqueFd openFifo(const std::string& path, int mode, const std::string& peerName) {
  UniqueFd fd(::open(path.c_str(), mode | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid())
    fail(hoopSystemError, "pipe to ", peerName, ": open ", path, ": ", std::strerror(errno));
  return fd;
}

}  // namespace

std::string LoopbackPipeTransport::whyNot(const PeerPair& pair) const {
  return pair.sameHost ? std::string() : "pipe needs both ranks on one host";
}

std::unique_ptr<Connection> LoopbackPipeTransport::connect(const PeerPair& pair,
                                                           std::unique_ptr<Connection>& /*link*/,
                                                           SetupChannel& setup,
                                                           const TransportSettings& /*settings*/) {
  // The lower rank makes a directory with a pipe each way and tells the peer where it is.
  std::array<char, 256> directory{};
  const bool lower = pair.self < pair.peer;
  if (lower) {
    std::string pattern = "/tmp/hoop-pipe-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      fail(hoopSystemError, "mkdtemp: ", std::strerror(errno));
    for (const char* end : {"/up", "/down"}) {
      if (::mkfifo((pattern + end).c_str(), 0600) != 0) {
        fail(hoopSystemError, "mkfifo: ", std::strerror(errno));
      }
    }
    std::strncpy(directory.data(), pattern.c_str(), directory.size() - 1);
    setup.send(directory.data(), directory.size());
  } else {
    setup.recv(directory.data(), directory.size());
  }
  const std::string where(directory.data());
  // The lower rank writes up and reads down. Opening a read end never blocks; a write end opens
  // only once the peer holds the read end, hence the exchange in between.
  UniqueFd in = openFifo(where + (lower ? "/down" : "/up"), O_RDONLY, pair.peerName);
  char ready = 1;
  setup.send(&ready, 1);
  setup.recv(&ready, 1);
  UniqueFd out = openFifo(where + (lower ? "/up" : "/down"), O_WRONLY, pair.peerName);
  setup.send(&ready, 1);
  setup.recv(&ready, 1);
  if (lower) {  // both ends are open on both sides: the names are no longer needed
    ::unlink((where + "/up").c_str());
    ::unlink((where + "/down").c_str());
    ::rmdir(where.c_str());
  }
  ++connectionsMade_;
  return std::make_unique<PipeConnection>(std::move(in), std::move(out), pair.peerName);
}

}  // namespace hoop::test
