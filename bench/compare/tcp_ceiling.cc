// hoop-tcp-ceiling: how fast can any ring allreduce go over loopback TCP on this machine?
//
// A raw-socket benchmark with no hoop code in it. It forks --ranks processes, links them in a
// ring over 127.0.0.1 (rank r sends to r+1 and receives from r-1) and, per size S, moves exactly
// the bytes a ring allreduce moves, 2(N-1)/N * S each way per rank, the least any allreduce can
// move per rank. One thread per process drives non-blocking sockets with poll(2), sending and
// receiving at once. The buffer is reduced in loops of N pieces (--pieces: each size is run with
// every piece size given and the fastest is reported; piece 0 is the textbook ring's 2(N-1)
// steps of S/N); every step sends the chunk the step before received, as in a real ring.
//
//   default        no reduction: reduce-scatter steps land in a scratch buffer, all-gather steps
//                  in their place in the data buffer (the transport's share of an allreduce);
//   --reduce       a complete float32 sum ring allreduce: each reduce-scatter step is summed
//                  into the data buffer as its bytes arrive (a plain loop, vectorised at -O2);
//   --steps ring   (default) pipelined boundaries: a byte is forwarded once it is in and summed;
//   --steps strict a step starts when the previous one is done both ways;
//   --steps 1      the same bytes per rank as one stream with no steps at all.
//
// Sockets mirror hoop's TCP transport: TCP_NODELAY, SO_SNDBUF/SO_RCVBUF set to --sockbuf bytes
// (hoop's HOOP_SOCKET_BUFFER default, 4 MiB) after connect/accept, one connection per pair of
// neighbours (at 2 ranks both directions share it, as in hoop).
//
// Timing: no barrier (the ring synchronises the ranks); each rank times every iteration, sends
// the times to the parent over a pipe, and the parent reports per size the median over
// iterations of the slowest rank's time (and the slowest rank's mean, hoop-perf -a 3's figure),
// with busbw = 2(N-1)/N * S / time (GB = 1e9 bytes), the definition hoop-perf uses. Before the
// timed iterations of a size one call is checked exactly against integer-valued inputs;
// --reduce then runs on zeros so repeated sums cannot overflow.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

[[noreturn]] void failWithErrno(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

enum class Boundaries {
  kPipelined,  // step s+1 sends each byte as soon as step s has received (and summed) it
  kStrict,     // step s+1 starts once step s is done both ways
};

struct Options {
  int ranks = 4;
  std::vector<size_t> sizes;
  int iters = 10;
  int warmup = 2;
  bool stream = false;                             // --steps 1
  Boundaries boundaries = Boundaries::kPipelined;  // --steps ring (pipelined) or strict
  size_t slice = 256 << 10;                        // most bytes one send/recv call moves
  // Ring loops of N pieces of each of these sizes (0: one loop); the fastest is reported.
  std::vector<size_t> pieces{64 << 10, 128 << 10, 256 << 10, 512 << 10, 0};
  bool reduce = false;
  int socketBuffer = 4 << 20;
  int timeoutSec = 60;
  std::string csv;
};

bool parseSize(const std::string& text, size_t* out) {
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return false;
  std::string suffix(end);
  if (suffix == "K" || suffix == "k")
    value <<= 10;
  else if (suffix == "M" || suffix == "m")
    value <<= 20;
  else if (suffix == "G" || suffix == "g")
    value <<= 30;
  else if (!suffix.empty())
    return false;
  *out = static_cast<size_t>(value);
  return true;
}

// Sizes separated by spaces or commas, each a multiple of 4 bytes (whole floats).
bool parseSizeList(const std::string& text, std::vector<size_t>* out) {
  out->clear();
  size_t start = 0;
  while ((start = text.find_first_not_of(" ,", start)) != std::string::npos) {
    size_t end = text.find_first_of(" ,", start);
    size_t bytes = 0;
    if (!parseSize(text.substr(start, end - start), &bytes) || bytes % 4 != 0) return false;
    out->push_back(bytes);
    start = end;
  }
  return !out->empty();
}

void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--ranks N] [--sizes \"1M 2M 8M 32M 128M 256M\"] [--iters K] "
               "[--warmup W]\n"
               "          [--steps ring|strict|1] [--reduce] [--pieces \"64K 128K 256K 512K 0\"]\n"
               "          [--slice BYTES] [--sockbuf BYTES] [--timeout SEC] [--csv FILE]\n"
               "  sizes take K/M/G (powers of 1024) and must be multiples of 4 bytes;\n"
               "  --slice caps the bytes of one send/recv call (default 256K, 0: no cap);\n"
               "  --sockbuf 0 leaves the kernel's buffer autotuning alone (default 4M, as hoop)\n",
               argv0);
}

bool parseOptions(int argc, char** argv, Options* o) {
  std::string sizes = "1M 2M 8M 32M 128M 256M";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--reduce") {
      o->reduce = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    std::string value = argv[++i];
    size_t bytes = 0;
    if (arg == "--ranks")
      o->ranks = std::atoi(value.c_str());
    else if (arg == "--sizes")
      sizes = value;
    else if (arg == "--iters")
      o->iters = std::atoi(value.c_str());
    else if (arg == "--warmup")
      o->warmup = std::atoi(value.c_str());
    else if (arg == "--steps" && (value == "1" || value == "ring" || value == "strict")) {
      o->stream = value == "1";
      o->boundaries = value == "strict" ? Boundaries::kStrict : Boundaries::kPipelined;
    } else if (arg == "--pieces") {
      if (!parseSizeList(value, &o->pieces)) return false;
    } else if (arg == "--slice" && parseSize(value, &bytes))
      o->slice = bytes;
    else if (arg == "--sockbuf" && parseSize(value, &bytes))
      o->socketBuffer = int(bytes);
    else if (arg == "--timeout")
      o->timeoutSec = std::atoi(value.c_str());
    else if (arg == "--csv")
      o->csv = value;
    else
      return false;
  }
  if (!parseSizeList(sizes, &o->sizes)) return false;
  if (o->stream) o->pieces = {0};
  if (o->stream && o->reduce) {
    std::fprintf(stderr, "--reduce needs the ring's steps (it sums each step's chunk)\n");
    return false;
  }
  bool noZeroSize = std::find(o->sizes.begin(), o->sizes.end(), 0) == o->sizes.end();
  return o->ranks >= 2 && o->iters >= 1 && o->warmup >= 0 && o->timeoutSec > 0 && noZeroSize;
}

// ---- sockets ----------------------------------------------------------------------------

Fd listenOnLoopback(uint16_t* port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) failWithErrno("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), length) != 0) {
    failWithErrno("bind 127.0.0.1");
  }
  if (::listen(fd.get(), 4) != 0) failWithErrno("listen");
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    failWithErrno("getsockname");
  }
  *port = ntohs(address.sin_port);
  return fd;
}

// The data path's options, as hoop's TCP transport sets them on every data socket.
void tuneDataSocket(int fd, int bufferBytes) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (bufferBytes > 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufferBytes, sizeof(bufferBytes));
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufferBytes, sizeof(bufferBytes));
  }
}

void setNonBlocking(int fd, const std::string& what) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) failWithErrno(what + ": fcntl");
}

void writeAll(int fd, const void* data, size_t bytes, const std::string& what) {
  const char* cursor = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t put = ::write(fd, cursor, bytes);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) failWithErrno(what);
    cursor += put;
    bytes -= static_cast<size_t>(put);
  }
}

void readAll(int fd, void* data, size_t bytes, const std::string& what) {
  char* cursor = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t got = ::read(fd, cursor, bytes);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) failWithErrno(what);
    if (got == 0) throw std::runtime_error(what + ": closed by the other end");
    cursor += got;
    bytes -= static_cast<size_t>(got);
  }
}

// A rank's two ring links; at 2 ranks both are the one connection between the pair.
struct Ring {
  int rank = 0;
  int ranks = 0;
  int sendFd = -1;  // to rank + 1
  int recvFd = -1;  // from rank - 1
  int timeoutMs = 0;
  int right() const { return (rank + 1) % ranks; }
  int left() const { return (rank + ranks - 1) % ranks; }
};

std::string rankText(int rank) { return "rank " + std::to_string(rank); }

// Connects to the right neighbour and accepts the left one; says hello (the sender's rank) on
// every new connection so a wrong peer is caught before any data moves.
std::vector<Fd> connectRing(Ring* ring, const std::vector<uint16_t>& ports, Fd listener,
                            int socketBuffer) {
  std::vector<Fd> links;
  const std::string self = rankText(ring->rank);
  const bool connects = ring->ranks > 2 || ring->rank == 0;
  const bool accepts = ring->ranks > 2 || ring->rank == 1;
  if (connects) {
    const std::string what = self + ": connect to " + rankText(ring->right());
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) failWithErrno(what + ": socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(ports[static_cast<size_t>(ring->right())]);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      failWithErrno(what);
    }
    tuneDataSocket(fd.get(), socketBuffer);
    int32_t hello = ring->rank;
    writeAll(fd.get(), &hello, sizeof(hello), what + ": hello");
    ring->sendFd = fd.get();
    links.push_back(std::move(fd));
  }
  if (accepts) {
    const std::string what = self + ": accept from " + rankText(ring->left());
    Fd fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (fd.get() < 0) failWithErrno(what);
    tuneDataSocket(fd.get(), socketBuffer);
    int32_t hello = -1;
    readAll(fd.get(), &hello, sizeof(hello), what + ": hello");
    if (hello != ring->left()) {
      throw std::runtime_error(what + ": the hello came from rank " + std::to_string(hello));
    }
    ring->recvFd = fd.get();
    links.push_back(std::move(fd));
  }
  if (!connects) ring->sendFd = ring->recvFd;
  if (!accepts) ring->recvFd = ring->sendFd;
  for (Fd& link : links) setNonBlocking(link.get(), self + ": data socket");
  return links;
}

// ---- the steps: send one window and receive another at the same time ---------------------

// `total` bytes through `capacity` bytes of buffer, reused from the start when it runs out.
struct Window {
  char* base = nullptr;
  size_t capacity = 0;
  size_t total = 0;
  size_t done = 0;

  bool finished() const { return done == total; }
  char* cursor() const { return base + done % capacity; }
  size_t contiguous() const { return std::min(total - done, capacity - done % capacity); }
};

// target += source. Blocks of 16 floats with a fixed-count inner loop: GCC's -O2 cost model
// vectorises only loops whose trip count needs no scalar remainder, and __restrict__ spares it
// the aliasing check, so this compiles to SSE adds with the project's flags.
void sumInto(float* __restrict__ target, const float* __restrict__ source, size_t count) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    for (size_t j = 0; j < 16; ++j) target[i + j] += source[i + j];
  }
  for (; i < count; ++i) target[i] += source[i];
}

// One step: `out` goes to the right neighbour while `in` comes from the left one; with a
// reduce target the received floats are summed into it as they arrive, while still in cache.
struct Step {
  Window out;
  Window in;
  float* sumTarget = nullptr;
  size_t summed = 0;             // floats
  bool forwardsPrevious = true;  // sends what the step before receives (not a loop's first)

  void absorb() {
    if (!sumTarget) return;
    const size_t whole = in.done / sizeof(float);
    const float* received = reinterpret_cast<const float*>(in.base);
    sumInto(sumTarget + summed, received + summed, whole - summed);
    summed = whole;
  }
  // Received bytes the next step may send on (the next step sends the chunk this one receives).
  size_t ready() const { return sumTarget ? summed * sizeof(float) : in.done; }
};

std::string progressText(const Ring& ring, const Step& step) {
  return "sent " + std::to_string(step.out.done) + "/" + std::to_string(step.out.total) +
         " bytes to " + rankText(ring.right()) + ", received " + std::to_string(step.in.done) +
         "/" + std::to_string(step.in.total) + " from " + rankText(ring.left());
}

// Runs the steps in order in both directions at once, each syscall moving at most `slice`
// bytes (0: no cap), and sleeps in poll(2) only when neither direction can move.
void runSteps(const Ring& ring, std::vector<Step>& steps, Boundaries boundaries, size_t slice) {
  const size_t count = steps.size();
  size_t sending = 0;    // the step whose bytes go out now
  size_t receiving = 0;  // the step whose bytes come in now
  auto where = [&](size_t step) { return rankText(ring.rank) + ", step " + std::to_string(step); };
  auto capped = [&](size_t bytes) { return slice ? std::min(bytes, slice) : bytes; };
  while (true) {
    // Steps with nothing to move in a direction (tiny buffers) are done in that direction.
    while (sending < count && steps[sending].out.finished()) ++sending;
    while (receiving < count && steps[receiving].in.finished()) ++receiving;
    if (sending == count && receiving == count) break;
    // How far the sending step may go: its chunk is what the previous step receives.
    size_t sendLimit = 0;
    if (sending < count) {
      const Step& previous = steps[sending == 0 ? 0 : sending - 1];
      bool previousDone =
          sending == 0 || receiving >= sending ||
          (boundaries == Boundaries::kPipelined && !steps[sending].forwardsPrevious);
      if (previousDone)
        sendLimit = steps[sending].out.total;
      else if (boundaries == Boundaries::kPipelined)
        sendLimit = previous.ready();
    }
    const bool mayReceive =
        receiving < count && (boundaries == Boundaries::kPipelined || sending >= receiving);

    bool progressed = false;
    if (sending < count && steps[sending].out.done < sendLimit) {
      Window& out = steps[sending].out;
      size_t bytes = capped(std::min(out.contiguous(), sendLimit - out.done));
      ssize_t put = ::send(ring.sendFd, out.cursor(), bytes, MSG_NOSIGNAL);
      if (put > 0) {
        out.done += static_cast<size_t>(put);
        progressed = true;
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        failWithErrno(where(sending) + ": send to " + rankText(ring.right()));
      }
    }
    if (mayReceive) {
      Step& step = steps[receiving];
      ssize_t got = ::recv(ring.recvFd, step.in.cursor(), capped(step.in.contiguous()), 0);
      if (got > 0) {
        step.in.done += static_cast<size_t>(got);
        step.absorb();
        progressed = true;
      } else if (got == 0) {
        throw std::runtime_error(where(receiving) + ": " + rankText(ring.left()) +
                                 " closed the connection (" + progressText(ring, step) + ")");
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        failWithErrno(where(receiving) + ": recv from " + rankText(ring.left()));
      }
    }
    if (progressed) continue;

    // Neither moved: wait for room to send (if the data is there) or bytes to receive.
    pollfd waits[2];
    nfds_t used = 0;
    if (sending < count && steps[sending].out.done < sendLimit) {
      waits[used++] = {ring.sendFd, POLLOUT, 0};
    }
    if (mayReceive) {
      if (used == 1 && waits[0].fd == ring.recvFd)
        waits[0].events |= POLLIN;
      else
        waits[used++] = {ring.recvFd, POLLIN, 0};
    }
    int ready = ::poll(waits, used, ring.timeoutMs);
    if (ready < 0 && errno != EINTR) failWithErrno(where(receiving) + ": poll");
    if (ready == 0) {
      const Step& stuck = steps[std::min(receiving, count - 1)];
      throw std::runtime_error(where(receiving) + ": no progress for " +
                               std::to_string(ring.timeoutMs / 1000) + " s (" +
                               progressText(ring, stuck) + ")");
    }
  }
}

// ---- the ring allreduce --------------------------------------------------------------------

// The buffer is cut into loops of N pieces (the last loop may be shorter), as pipelined rings do
// so that a piece is still in cache when it is forwarded; --piece 0 makes one loop of the whole
// buffer, the textbook ring's S/N chunks. Chunk c of loop g covers floats
// [start + c*L/N, start + (c+1)*L/N) of the loop's L floats.
struct Layout {
  size_t floats = 0;
  int ranks = 0;
  size_t loopFloats = 0;

  size_t loops() const { return (floats + loopFloats - 1) / loopFloats; }
  size_t loopStart(size_t loop) const { return loop * loopFloats; }
  size_t loopLength(size_t loop) const { return std::min(loopFloats, floats - loopStart(loop)); }
  size_t begin(size_t loop, int chunk) const {
    return loopStart(loop) + loopLength(loop) * size_t(chunk) / size_t(ranks);
  }
  size_t bytes(size_t loop, int chunk) const {
    return (begin(loop, chunk + 1) - begin(loop, chunk)) * sizeof(float);
  }
  size_t largestChunkBytes() const {
    return (std::min(loopFloats, floats) / size_t(ranks) + 1) * sizeof(float);
  }
  int chunkOf(size_t index) const {
    const size_t loop = index / loopFloats;
    int chunk = 0;
    while (chunk + 1 < ranks && begin(loop, chunk + 1) <= index) ++chunk;
    return chunk;
  }
};

Layout makeLayout(size_t bytes, int ranks, size_t pieceBytes) {
  Layout layout{bytes / sizeof(float), ranks, 0};
  const size_t pieceFloats = pieceBytes / sizeof(float);
  layout.loopFloats = pieceFloats ? pieceFloats * size_t(ranks) : layout.floats;
  return layout;
}

struct Buffers {
  std::vector<float> data;     // the allreduce's in-place buffer
  std::vector<float> scratch;  // where reduce-scatter steps (or the stream) land
};

int wrap(int chunk, int ranks) { return ((chunk % ranks) + ranks) % ranks; }

// Reduce-scatter step k sends chunk r-k and receives chunk r-k-1 (summed in); after N-1 steps
// rank r holds the total of chunk r+1. All-gather step k sends chunk r+1-k and receives chunk
// r-k in place. Every step sends the chunk the step before received, so with pipelined
// boundaries a byte is forwarded as soon as it is in (and summed); in-order TCP delivery makes
// it safe for a step to receive into a chunk an earlier step may still be sending: the byte
// that overwrites it was caused by the send of the byte it replaces.
std::vector<Step> ringSteps(const Ring& ring, const Layout& layout, Buffers& buffers, bool reduce) {
  const int n = ring.ranks;
  const int r = ring.rank;
  char* data = reinterpret_cast<char*>(buffers.data.data());
  char* scratch = reinterpret_cast<char*>(buffers.scratch.data());
  std::vector<Step> steps;
  for (size_t loop = 0; loop < layout.loops(); ++loop) {
    for (int step = 0; step < 2 * (n - 1); ++step) {
      const bool scatter = step < n - 1;
      const int k = scatter ? step : step - (n - 1);
      const int sendChunk = wrap(scatter ? r - k : r + 1 - k, n);
      const int recvChunk = wrap(scatter ? r - k - 1 : r - k, n);
      const size_t sendBytes = layout.bytes(loop, sendChunk);
      const size_t recvBytes = layout.bytes(loop, recvChunk);
      const size_t recvFloat = layout.begin(loop, recvChunk);
      Step s;
      s.out = Window{data + layout.begin(loop, sendChunk) * sizeof(float), sendBytes, sendBytes};
      s.in = Window{scatter ? scratch : data + recvFloat * sizeof(float), recvBytes, recvBytes};
      if (scatter && reduce) s.sumTarget = buffers.data.data() + recvFloat;
      s.forwardsPrevious = step > 0;
      steps.push_back(s);
    }
  }
  return steps;
}

// The ring's bytes per rank, 2(N-1)/N * S, as one stream from the data buffer into scratch.
std::vector<Step> streamStep(const Ring& ring, Buffers& buffers) {
  const size_t bytes = buffers.data.size() * sizeof(float);
  const size_t total = 2 * size_t(ring.ranks - 1) * bytes / size_t(ring.ranks);
  Step s;
  s.out = Window{reinterpret_cast<char*>(buffers.data.data()), bytes, total};
  s.in = Window{reinterpret_cast<char*>(buffers.scratch.data()), bytes, total};
  return {s};
}

float inputValue(int rank, size_t index) { return float((rank + 1) * int(index % 13 + 1)); }

// What the checked call must leave behind: the sum for --reduce; without reduction each chunk
// c is its owner's (rank c-1, which never overwrites it) input; the stream leaves the left
// neighbour's whole buffer in scratch (the stream is at least one buffer long).
void checkResult(const Ring& ring, const Layout& layout, const Buffers& buffers, bool reduce,
                 bool streamed) {
  const int n = ring.ranks;
  for (size_t i = 0; i < layout.floats; ++i) {
    float expected = 0;
    float actual = streamed ? buffers.scratch[i] : buffers.data[i];
    if (streamed) {
      expected = inputValue(ring.left(), i);
    } else if (reduce) {
      for (int rank = 0; rank < n; ++rank) expected += inputValue(rank, i);
    } else {
      expected = inputValue(wrap(layout.chunkOf(i) - 1, n), i);
    }
    if (actual != expected) {
      throw std::runtime_error(rankText(ring.rank) + ": wrong result at float " +
                               std::to_string(i) + " of " + std::to_string(layout.floats) + ": " +
                               std::to_string(actual) + ", expected " + std::to_string(expected));
    }
  }
}

// One size with one piece size: a checked call, warm-ups, then timed iterations whose times
// (us) go to the parent through `results`.
void runSize(const Options& o, const Ring& ring, size_t size, size_t piece, int results) {
  {
    Layout layout = makeLayout(size, ring.ranks, piece);
    Buffers buffers;
    buffers.data.resize(layout.floats);
    buffers.scratch.resize(o.stream ? layout.floats : layout.largestChunkBytes() / sizeof(float));
    for (size_t i = 0; i < layout.floats; ++i) buffers.data[i] = inputValue(ring.rank, i);
    auto once = [&] {
      std::vector<Step> steps =
          o.stream ? streamStep(ring, buffers) : ringSteps(ring, layout, buffers, o.reduce);
      runSteps(ring, steps, o.boundaries, o.slice);
    };
    once();
    checkResult(ring, layout, buffers, o.reduce, o.stream);
    if (o.reduce) std::fill(buffers.data.begin(), buffers.data.end(), 0.0f);

    std::vector<double> micros;
    for (int i = 0; i < o.warmup + o.iters; ++i) {
      auto start = Clock::now();
      once();
      auto elapsed = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      if (i >= o.warmup) micros.push_back(elapsed);
    }
    writeAll(results, micros.data(), micros.size() * sizeof(double),
             rankText(ring.rank) + ": write results to the parent");
  }
}

void runRank(const Options& o, const Ring& ring, int results) {
  for (size_t size : o.sizes) {
    for (size_t piece : o.pieces) runSize(o, ring, size, piece, results);
  }
}

// ---- the parent: fork, collect, print ----------------------------------------------------

std::string sizeLabel(size_t bytes) {
  if (bytes == 0) return "0";
  if (bytes % (1 << 30) == 0) return std::to_string(bytes >> 30) + "G";
  if (bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + "M";
  if (bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

// What the kernel grants for --sockbuf (it doubles the request, capped by net.core.*mem_max).
std::pair<int, int> grantedBuffers(int request) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  tuneDataSocket(fd.get(), request);
  int send = 0, recv = 0;
  socklen_t length = sizeof(int);
  ::getsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &send, &length);
  length = sizeof(int);
  ::getsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &recv, &length);
  return {send, recv};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

std::string stepsName(const Options& o) {
  if (o.stream) return "1";
  std::string count = std::to_string(2 * (o.ranks - 1));
  return count + (o.boundaries == Boundaries::kStrict ? "-strict" : "-pipelined");
}

struct Child {
  pid_t pid = -1;
  Fd results;
};

// One (size, piece) block of results from every rank.
struct Timing {
  std::vector<double> slowest;  // per iteration, the slowest rank's time
  double slowestMean = 0;       // the largest per-rank mean
  double median = 0;            // of `slowest`
};

Timing readTiming(const Options& o, std::vector<Child>& children) {
  Timing timing;
  timing.slowest.assign(size_t(o.iters), 0.0);
  for (int rank = 0; rank < o.ranks; ++rank) {
    std::vector<double> micros(size_t(o.iters));
    readAll(children[size_t(rank)].results.get(), micros.data(), micros.size() * sizeof(double),
            "results of " + rankText(rank));
    double sum = 0;
    for (size_t i = 0; i < micros.size(); ++i) {
      timing.slowest[i] = std::max(timing.slowest[i], micros[i]);
      sum += micros[i];
    }
    timing.slowestMean = std::max(timing.slowestMean, sum / double(micros.size()));
  }
  timing.median = median(timing.slowest);
  return timing;
}

std::string piecesText(const std::vector<size_t>& pieces) {
  std::string text;
  for (size_t piece : pieces) text += (text.empty() ? "" : ",") + sizeLabel(piece);
  return text;
}

int collect(const Options& o, std::vector<Child>& children) {
  const int n = o.ranks;
  std::FILE* csv = nullptr;
  if (!o.csv.empty()) {
    csv = std::fopen(o.csv.c_str(), "w");
    if (!csv) {
      std::fprintf(stderr, "hoop-tcp-ceiling: cannot write %s: %s\n", o.csv.c_str(),
                   std::strerror(errno));
      return 1;
    }
    std::fprintf(
        csv,
        "ranks,steps,reduce,slice,piece,bytes,median_us,mean_us,min_us,max_us,algbw_GBs,busbw_GBs,"
        "busbw_mean_GBs\n");
  }
  auto [sendBuffer, recvBuffer] = grantedBuffers(o.socketBuffer);
  std::printf(
      "# hoop-tcp-ceiling ranks=%d steps=%s reduce=%s pieces=%s slice=%zu iters=%d warmup=%d\n", n,
      stepsName(o).c_str(), o.reduce ? "yes" : "no", piecesText(o.pieces).c_str(), o.slice, o.iters,
      o.warmup);
  std::printf(
      "# each size runs with every piece size (0: S/N steps); the fastest median is shown\n");
  std::printf(
      "# sockbuf request=%d granted SO_SNDBUF=%d SO_RCVBUF=%d\n"
      "# median/min/max: over iterations of the slowest rank's time; mean: the slowest rank's "
      "mean\n# (hoop-perf -a 3); busbw from the median, busbw_mean from the mean\n",
      o.socketBuffer, sendBuffer, recvBuffer);
  std::printf("# %6s %12s %6s %11s %11s %11s %11s %10s %10s %10s\n", "size", "bytes", "piece",
              "median_us", "mean_us", "min_us", "max_us", "algbw_GBs", "busbw_GBs", "busbw_mean");
  std::fflush(stdout);
  for (size_t size : o.sizes) {
    Timing best;
    size_t bestPiece = 0;
    for (size_t piece : o.pieces) {
      Timing timing;
      try {
        timing = readTiming(o, children);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "hoop-tcp-ceiling: %s (size %s)\n", error.what(),
                     sizeLabel(size).c_str());
        return 1;
      }
      if (best.slowest.empty() || timing.median < best.median) {
        best = timing;
        bestPiece = piece;
      }
    }
    const std::vector<double>& slowest = best.slowest;
    const double slowestMean = best.slowestMean;
    double us = best.median;
    double algbw = double(size) / us / 1e3;
    double busbw = algbw * 2.0 * (n - 1) / n;
    double busbwMean = double(size) / slowestMean / 1e3 * 2.0 * (n - 1) / n;
    auto [low, high] = std::minmax_element(slowest.begin(), slowest.end());
    std::printf("  %6s %12zu %6s %11.1f %11.1f %11.1f %11.1f %10.3f %10.3f %10.3f\n",
                sizeLabel(size).c_str(), size, sizeLabel(bestPiece).c_str(), us, slowestMean, *low,
                *high, algbw, busbw, busbwMean);
    std::fflush(stdout);
    if (csv) {
      std::fprintf(csv, "%d,%s,%d,%zu,%zu,%zu,%.1f,%.1f,%.1f,%.1f,%.4f,%.4f,%.4f\n", n,
                   stepsName(o).c_str(), o.reduce ? 1 : 0, o.slice, bestPiece, size, us,
                   slowestMean, *low, *high, algbw, busbw, busbwMean);
    }
  }
  if (csv) std::fclose(csv);
  return 0;
}

// Waits for every child; a child that failed is named, and the rest are stopped once one did.
int reap(std::vector<Child>& children, bool stopOthers) {
  int status = 0;
  if (stopOthers) {
    for (Child& child : children) ::kill(child.pid, SIGTERM);
  }
  for (size_t rank = 0; rank < children.size(); ++rank) {
    int wstatus = 0;
    if (::waitpid(children[rank].pid, &wstatus, 0) < 0) continue;
    bool ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    bool stoppedHere = stopOthers && WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGTERM;
    if (!ok && !stoppedHere) {
      std::fprintf(stderr, "hoop-tcp-ceiling: rank %zu %s %d\n", rank,
                   WIFEXITED(wstatus) ? "exited with" : "was killed by signal",
                   WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus));
      status = 1;
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // A neighbour that dies closes its sockets: report that as an error, not a silent SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  Options o;
  if (!parseOptions(argc, argv, &o)) {
    usage(argv[0]);
    return 2;
  }
  std::vector<Fd> listeners;
  std::vector<uint16_t> ports(size_t(o.ranks));
  std::vector<Child> children(size_t(o.ranks));
  std::vector<Fd> resultWriters;
  try {
    for (int rank = 0; rank < o.ranks; ++rank) {
      listeners.push_back(listenOnLoopback(&ports[size_t(rank)]));
      int ends[2];
      if (::pipe2(ends, O_CLOEXEC) != 0) failWithErrno("pipe");
      children[size_t(rank)].results = Fd(ends[0]);
      resultWriters.emplace_back(ends[1]);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hoop-tcp-ceiling: %s\n", error.what());
    return 1;
  }
  std::fflush(stdout);
  for (int rank = 0; rank < o.ranks; ++rank) {
    pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("hoop-tcp-ceiling: fork");
      reap(children, true);
      return 1;
    }
    if (pid == 0) {
      int code = 0;
      try {
        Ring ring;
        ring.rank = rank;
        ring.ranks = o.ranks;
        ring.timeoutMs = o.timeoutSec * 1000;
        Fd results = std::move(resultWriters[size_t(rank)]);
        Fd listener = std::move(listeners[size_t(rank)]);
        listeners.clear();
        resultWriters.clear();
        children.clear();
        std::vector<Fd> links = connectRing(&ring, ports, std::move(listener), o.socketBuffer);
        runRank(o, ring, results.get());
      } catch (const std::exception& error) {
        std::fprintf(stderr, "hoop-tcp-ceiling: %s\n", error.what());
        code = 1;
      }
      std::fflush(stderr);
      ::_exit(code);
    }
    children[size_t(rank)].pid = pid;
    resultWriters[size_t(rank)].reset();
  }
  listeners.clear();
  int status = collect(o, children);
  int childStatus = reap(children, status != 0);
  return status != 0 ? status : childStatus;
}
