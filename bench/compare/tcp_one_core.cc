// hoop-tcp-one-core: what one CPU core pays to move a byte through a loopback TCP socket.
//
// One thread holds both ends of one 127.0.0.1 connection and alternates: send a chunk, then read
// it back. Both copies (into the kernel and out of it) and the whole TCP path run on this core,
// with no wake-ups and no other process: the cheapest a byte ever crosses a socket here. An
// allreduce over n ranks must push at least 2(n-1) buffers through sockets in all (the one-way
// gossip bound), so on a host with C cores no schedule's bus bandwidth, 2(n-1)/n * S / time, can
// exceed C * rate / n: an upper bound that ignores the reductions, the scheduler and the cache.
//
//   hoop-tcp-one-core [--chunks "64K 256K 1M"] [--bytes 1G] [--repeats 7]
// Prints per chunk size the median rate (GB = 1e9 bytes) over the repeats, and min and max.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/env.h"
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

size_t parseBytes(const std::string& text) {
  const std::optional<size_t> bytes = hoop::parseByteSize(text);
  if (!bytes || *bytes == 0) {
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

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> chunks = {64 << 10, 256 << 10, 1 << 20};
  size_t total = size_t{1} << 30;
  int repeats = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--chunks") {
      chunks.clear();
      std::istringstream words(argv[i + 1]);
      for (std::string word; words >> word;) chunks.push_back(parseBytes(word));
    } else if (flag == "--bytes") {
      total = parseBytes(argv[i + 1]);
    } else if (flag == "--repeats") {
      repeats = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "usage: %s [--chunks \"64K 256K 1M\"] [--bytes 1G] [--repeats 7]\n",
                   argv[0]);
      return 2;
    }
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
  // As hoop's TCP transport sets its sockets: no Nagle, 4 MiB buffers (HOOP_SOCKET_BUFFER).
  hoop::tuneDataSocket(sender.get(), 4 << 20);
  hoop::tuneDataSocket(receiver.get(), 4 << 20);

  std::printf(
      "# hoop-tcp-one-core: one thread sends each chunk and reads it back, %zu bytes a "
      "repeat\n#   chunk  median_GBs  min_GBs  max_GBs\n",
      total);
  for (size_t chunk : chunks) {
    std::vector<char> out(chunk, 1), in(chunk);
    std::vector<double> rates;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      for (size_t moved = 0; moved < total; moved += chunk) {
        moveAll(sender.get(), out.data(), chunk, true);
        moveAll(receiver.get(), in.data(), chunk, false);
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      rates.push_back(static_cast<double>(total) / seconds / 1e9);
    }
    std::sort(rates.begin(), rates.end());
    std::printf("%9zu  %10.2f  %7.2f  %7.2f\n", chunk, rates[rates.size() / 2], rates.front(),
                rates.back());
  }
  return 0;
}
