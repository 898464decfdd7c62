// hoop-tcp-one-core: what one CPU core pays to move a byte through a loopback TCP socket.
//
// One thread holds both ends of one 127.0.0.1 connection and alternates: send a chunk, then read
// it back. Both copies (into the kernel and out of it) and the whole TCP path run on this core,
// with no wake-ups and no other process: the cheapest a byte ever crosses a socket here. An
// allreduce over n ranks must push at least 2(n-1) buffers through sockets in all (the one-way
// gossip bound), so on a host with C cores no schedule's bus bandwidth, 2(n-1)/n * S / time, can
// exceed C * rate / n: an upper bound that ignores the reductions, the scheduler and the cache.
//
//   hoop-tcp-one-core [--chunks "64K 256K 1M"] [--bytes 1G] [--repeats 7] [--path copy]
//                     [--span 0]
// Prints per chunk size the median rate (GB = 1e9 bytes) over the repeats, and min and max.
//
// --span: by default every chunk is sent from and read into the same two chunk-sized buffers,
// which stay in the cache. With --span S the chunks walk through two buffers of S bytes each,
// as a large allreduce's pieces walk through its buffers: S larger than the last-level cache
// gives what the same copies cost from and to memory.
//
// --path says how the bytes enter and leave the kernel, to see whether either copy can be saved:
//   copy      send() and recv(): both copied, as hoop's TCP transport does.
//   splice    the sender hands the chunk's pages to the socket instead of copying them in
//             (vmsplice into a pipe, then splice from the pipe into the socket).
//   zerocopy  the receiver asks the kernel to map the received pages into its address space
//             (TCP_ZEROCOPY_RECEIVE) and reads them there once, as a reduction would; what the
//             kernel cannot map is read with recv(). Prints the share of bytes it mapped.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/env.h"
#include "core/config.h"
#include "transport/shm/shm_segment.h"
#include "transport/tcp/socket.h"

namespace {

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

// A new socket, or exit.
hoop::UniqueFd tcpSocket() {
  hoop::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  if (!fd.valid()) die("socket");
  return fd;
}

// A size from the command line; zero only where `zeroAllowed` (--span 0: the default).
size_t parseBytes(const std::string& text, bool zeroAllowed = false) {
  const std::optional<size_t> bytes = hoop::parseByteSize(text);
  if (!bytes || (*bytes == 0 && !zeroAllowed)) {
    std::fprintf(stderr, "not a size: '%s' (a number with K, M or G)\n", text.c_str());
    std::exit(2);
  }
  return *bytes;
}

void moveAll(int fd, char* data, size_t bytes, bool sending) {
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = sending ? ::send(fd, data + done, bytes - done, MSG_NOSIGNAL)
                              : ::recv(fd, data + done, bytes - done, 0);
    if (n <= 0) die(sending ? "send" : "recv");
    done += static_cast<size_t>(n);
  }
}

// Sends a chunk without copying it into the kernel: its pages go into a pipe by reference
// (vmsplice) and from there into the socket's buffers (splice). The pages must not change until
// the receiver has read them; here the chunk is read back before the next one is sent.
class SplicingSender {
 public:
  explicit SplicingSender(size_t chunk) {
    int ends[2];
    if (::pipe(ends) != 0) die("pipe");
    read_.reset(ends[0]);
    write_.reset(ends[1]);
    // A pipe holds 64 KiB unless enlarged; up to 1 MiB needs no privilege. Smaller only means
    // more calls, so a refusal is not an error.
    ::fcntl(write_.get(), F_SETPIPE_SZ, static_cast<int>(std::min<size_t>(chunk, 1 << 20)));
  }

  void send(int socket, char* data, size_t bytes) {
    for (size_t done = 0; done < bytes;) {
      iovec pages{data + done, bytes - done};
      const ssize_t queued = ::vmsplice(write_.get(), &pages, 1, 0);
      if (queued <= 0) die("vmsplice");
      for (ssize_t sent = 0; sent < queued;) {
        const ssize_t n = ::splice(read_.get(), nullptr, socket, nullptr,
                                   static_cast<size_t>(queued - sent), SPLICE_F_MOVE);
        if (n <= 0) die("splice");
        sent += n;
      }
      done += static_cast<size_t>(queued);
    }
  }

 private:
  hoop::UniqueFd read_, write_;
};

// Receives a chunk by mapping the socket's pages where the kernel can (whole, page-aligned
// pages), and with recv() where it cannot; every byte is read once either way.
class MappingReceiver {
 public:
  explicit MappingReceiver(int socket, size_t chunk) : socket_(socket) {
    void* address = ::mmap(nullptr, chunk, PROT_READ, MAP_SHARED, socket, 0);
    if (address == MAP_FAILED) die("mmap of the socket");
    window_ = hoop::Mapping(address, chunk);
  }

  void receive(char* fallback, size_t bytes) {
    for (size_t done = 0; done < bytes;) {
      tcp_zerocopy_receive request{};
      request.address = reinterpret_cast<uint64_t>(window_.get());
      request.length = static_cast<uint32_t>(std::min(bytes - done, window_.size()));
      socklen_t length = sizeof(request);
      if (::getsockopt(socket_, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &request, &length) != 0) {
        die("TCP_ZEROCOPY_RECEIVE");
      }
      if (request.err != 0) die("TCP_ZEROCOPY_RECEIVE reported a socket error");
      readOnce(static_cast<const char*>(window_.get()), request.length);
      done += request.length;
      mappedBytes_ += request.length;
      // The kernel says how many bytes to take with recv() before mapping can go on; none
      // mapped and no hint means it maps nothing just now.
      size_t copy = std::min<size_t>(request.recv_skip_hint, bytes - done);
      if (request.length == 0 && copy == 0) copy = bytes - done;
      if (copy > 0) {
        const ssize_t n = ::recv(socket_, fallback, copy, 0);
        if (n <= 0) die("recv");
        readOnce(fallback, static_cast<size_t>(n));
        done += static_cast<size_t>(n);
        copiedBytes_ += static_cast<size_t>(n);
      }
    }
    // Unmap the pages so that the next call maps fresh ones (and the kernel frees these).
    ::madvise(window_.get(), window_.size(), MADV_DONTNEED);
  }

  double mappedShare() const {
    const double all = static_cast<double>(mappedBytes_ + copiedBytes_);
    return all > 0 ? static_cast<double>(mappedBytes_) / all : 0;
  }

 private:
  // Reads every byte, as a reduction of the received piece would.
  void readOnce(const char* data, size_t bytes) {
    uint64_t sum = 0;
    for (size_t i = 0; i < bytes; i += sizeof(uint64_t)) {
      uint64_t word = 0;
      std::memcpy(&word, data + i, std::min(sizeof(word), bytes - i));
      sum += word;
    }
    checksum_ = checksum_ + sum;
  }

  int socket_;
  hoop::Mapping window_;
  size_t mappedBytes_ = 0;
  size_t copiedBytes_ = 0;
  volatile uint64_t checksum_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> chunks = {64 << 10, 256 << 10, 1 << 20};
  size_t total = size_t{1} << 30;
  int repeats = 7;
  size_t span = 0;
  std::string path = "copy";
  bool commandLineFits = true;  // every flag known and followed by its value
  for (int i = 1; i < argc && commandLineFits; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 == argc) {
      commandLineFits = false;
    } else if (flag == "--chunks") {
      chunks.clear();
      std::istringstream words(argv[i + 1]);
      for (std::string word; words >> word;) chunks.push_back(parseBytes(word));
    } else if (flag == "--bytes") {
      total = parseBytes(argv[i + 1]);
    } else if (flag == "--repeats") {
      repeats = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--span") {
      span = parseBytes(argv[i + 1], /*zeroAllowed=*/true);
    } else if (flag == "--path") {
      path = argv[i + 1];
    } else {
      commandLineFits = false;
    }
  }
  if (!commandLineFits || (path != "copy" && path != "splice" && path != "zerocopy")) {
    std::fprintf(stderr,
                 "usage: %s [--chunks \"64K 256K 1M\"] [--bytes 1G] [--repeats 7] "
                 "[--path copy|splice|zerocopy] [--span BYTES]\n",
                 argv[0]);
    return 2;
  }

  hoop::UniqueFd listener = tcpSocket();
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listener.get(), 1) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    die("listen on 127.0.0.1");
  }
  hoop::UniqueFd sender = tcpSocket();
  if (::connect(sender.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    die("connect");
  }
  hoop::UniqueFd receiver(::accept(listener.get(), nullptr, nullptr));
  if (!receiver.valid()) die("accept");
  // As hoop's TCP transport sets its sockets by default: no Nagle, 4 MiB buffers
  // (HOOP_SOCKET_BUFFER), its congestion control (HOOP_SOCKET_CONGESTION), its limit on
  // unsent bytes (HOOP_SOCKET_NOTSENT_LOWAT).
  const hoop::DataSocketTuning defaults = hoop::Config().dataSocketTuning();
  hoop::tuneDataSocket(sender.get(), defaults);
  hoop::tuneDataSocket(receiver.get(), defaults);

  std::printf(
      "# hoop-tcp-one-core: one thread sends each chunk and reads it back, %zu bytes a "
      "repeat, path %s, buffers %s\n#   chunk  median_GBs  min_GBs  max_GBs%s\n",
      total, path.c_str(), span == 0 ? "of one chunk" : ("of " + std::to_string(span)).c_str(),
      path == "zerocopy" ? "  mapped_share" : "");
  for (size_t chunk : chunks) {
    // Whole chunks only, at least one: the walk wraps to the start after the last.
    const size_t buffer = std::max(chunk, span / chunk * chunk);
    std::vector<char> out(buffer, 1), in(buffer);
    std::optional<SplicingSender> splicer;
    std::optional<MappingReceiver> mapper;
    if (path == "splice") splicer.emplace(chunk);
    if (path == "zerocopy") mapper.emplace(receiver.get(), chunk);
    std::vector<double> rates;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      for (size_t moved = 0; moved < total; moved += chunk) {
        const size_t at = moved % buffer;
        if (splicer) {
          splicer->send(sender.get(), out.data() + at, chunk);
        } else {
          moveAll(sender.get(), out.data() + at, chunk, true);
        }
        if (mapper) {
          mapper->receive(in.data() + at, chunk);
        } else {
          moveAll(receiver.get(), in.data() + at, chunk, false);
        }
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      rates.push_back(static_cast<double>(total) / seconds / 1e9);
    }
    std::sort(rates.begin(), rates.end());
    std::printf("%9zu  %10.2f  %7.2f  %7.2f", chunk, rates[rates.size() / 2], rates.front(),
                rates.back());
    if (mapper) std::printf("  %12.2f", mapper->mappedShare());
    std::printf("\n");
  }
  return 0;
}
