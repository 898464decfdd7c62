// hoop-delay-queue: holds every packet of one netfilter queue for a fixed time, then lets it go.
// The multi-host tests use it for a link delay where the kernel was built without the netem
// qdisc: iptables sends a host's packets to the queue (NFQUEUE), and this program, running in
// that host's network namespace, gives each one its verdict `delay` after it arrived. Packets
// leave in arrival order, so the link stays FIFO, like netem with a constant delay.
//
//   hoop-delay-queue QUEUE DELAY_US [MAX_SECONDS]
//
// It stops on SIGTERM or SIGINT, or after MAX_SECONDS (default 600) so that a forgotten one
// cannot outlive a test run by long; what it still holds is let go at once. The iptables rules
// carry --queue-bypass, so packets flow undelayed when it is not running.
#include <arpa/inet.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t stopRequested = 0;
void requestStop(int) { stopRequested = 1; }

struct HeldPacket {
  uint32_t id;
  Clock::time_point due;
};

struct DelayLine {
  std::chrono::microseconds delay;
  std::deque<HeldPacket> held;
  uint64_t packets = 0;
};

int onPacket(nfq_q_handle*, nfgenmsg*, nfq_data* packet, void* context) {
  auto* line = static_cast<DelayLine*>(context);
  const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(packet);
  if (header == nullptr) return 0;
  line->held.push_back({ntohl(header->packet_id), Clock::now() + line->delay});
  ++line->packets;
  return 0;
}

struct HandleCloser {
  void operator()(nfq_handle* handle) const { nfq_close(handle); }
};
struct QueueCloser {
  void operator()(nfq_q_handle* queue) const { nfq_destroy_queue(queue); }
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "hoop-delay-queue: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

long parseNumber(const char* text, const char* what) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 0) {
    std::fprintf(stderr, "hoop-delay-queue: %s '%s' is not a non-negative number\n", what, text);
    std::exit(2);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: hoop-delay-queue QUEUE DELAY_US [MAX_SECONDS]\n");
    return 2;
  }
  const auto queueNumber = static_cast<uint16_t>(parseNumber(argv[1], "queue"));
  DelayLine line{std::chrono::microseconds(parseNumber(argv[2], "delay")), {}, 0};
  const auto stopAt =
      Clock::now() + std::chrono::seconds(argc == 4 ? parseNumber(argv[3], "time") : 600);
  signal(SIGTERM, requestStop);
  signal(SIGINT, requestStop);

  std::unique_ptr<nfq_handle, HandleCloser> handle(nfq_open());
  if (!handle) die("nfq_open");
  std::unique_ptr<nfq_q_handle, QueueCloser> queue(
      nfq_create_queue(handle.get(), queueNumber, &onPacket, &line));
  if (!queue) die("nfq_create_queue " + std::to_string(queueNumber));
  if (nfq_set_mode(queue.get(), NFQNL_COPY_META, 0) < 0) die("nfq_set_mode");
  nfq_set_queue_maxlen(queue.get(), 1 << 16);
  // A full queue lets packets through rather than dropping them: slower is fine, lost is not.
  nfq_set_queue_flags(queue.get(), NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN);
  const int fd = nfq_fd(handle.get());
  int bufferBytes = 16 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufferBytes, sizeof bufferBytes);

  alignas(8) char buffer[1 << 16];
  while (!stopRequested && Clock::now() < stopAt) {
    auto now = Clock::now();
    auto wait = std::chrono::microseconds(100'000);
    if (!line.held.empty()) {
      wait = std::max(
          std::chrono::microseconds(0),
          std::chrono::duration_cast<std::chrono::microseconds>(line.held.front().due - now));
    }
    timespec timeout{static_cast<time_t>(wait.count() / 1'000'000),
                     static_cast<long>(wait.count() % 1'000'000 * 1000)};
    pollfd readable{fd, POLLIN, 0};
    if (ppoll(&readable, 1, &timeout, nullptr) > 0) {
      ssize_t got;
      while ((got = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT)) > 0) {
        nfq_handle_packet(handle.get(), buffer, static_cast<int>(got));
      }
      // ENOBUFS: the kernel dropped queue messages it could not hand over; fail-open and the
      // peers' retransmissions cover that. Anything else is a real error.
      if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS &&
          errno != EINTR) {
        die("recv");
      }
    }
    now = Clock::now();
    while (!line.held.empty() && line.held.front().due <= now) {
      nfq_set_verdict(queue.get(), line.held.front().id, NF_ACCEPT, 0, nullptr);
      line.held.pop_front();
    }
  }
  for (const HeldPacket& packet : line.held) {
    nfq_set_verdict(queue.get(), packet.id, NF_ACCEPT, 0, nullptr);
  }
  std::fprintf(stderr, "hoop-delay-queue: queue %u delayed %llu packets by %lld us\n",
               static_cast<unsigned>(queueNumber), static_cast<unsigned long long>(line.packets),
               static_cast<long long>(line.delay.count()));
  return 0;
}
