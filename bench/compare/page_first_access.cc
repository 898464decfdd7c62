// hoop-page-first-access: what a process's first access to a page of memory costs on this host.
//
// On some virtual machines the first access to each page costs microseconds even where the page
// is allocated and mapped, and it is paid again by every process that maps it. hoop's
// shared-memory connections read every page of their segment at set-up for that reason
// (readEveryPage in src/transport/shm/shm_segment.cc); this program measures the cost that read
// moves out of the collectives, with segments made as hoop makes them (posix_fallocate, then mmap
// with MAP_POPULATE) but without that read.
//
//   hoop-page-first-access [--size 8M] [--repeats 5]
//
// Prints, in microseconds per 4 KiB page, the median over the repeats and min-max:
//   anonymous, first write   a private anonymous page's first write (page fault, zeroing)
//   segment, first read      the creator reads one byte of every page of a new segment
//   segment, second read     the same again
//   peer, first read         a second process maps the segment after the creator read every
//                            page, then reads one byte of every page
//   peer reads new data      the creator writes every byte; the peer copies them all out: once
//     without set-up read    with nothing read before, once after reading one byte of every page
//     after set-up read      when it mapped the segment (what hoop does)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/env.h"
#include "transport/shm/shm_segment.h"  // Mapping, readEveryPage
#include "transport/tcp/socket.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kPage = 4096;

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

double microsPerPage(Clock::time_point start, size_t bytes) {
  const std::chrono::duration<double, std::micro> spent = Clock::now() - start;
  return spent.count() / static_cast<double>(bytes / kPage);
}

// hoop's set-up read of one byte of every page, timed.
double timedReadEveryPage(const void* data, size_t bytes) {
  const auto start = Clock::now();
  hoop::readEveryPage(data, bytes);
  return microsPerPage(start, bytes);
}

double anonymousFirstWrite(size_t bytes) {
  // Allocated, not touched (default-initialized): the writes below fault every page in.
  const auto memory = std::make_unique_for_overwrite<char[]>(bytes);
  const auto start = Clock::now();
  volatile char* page = memory.get();
  for (size_t offset = 0; offset < bytes; offset += kPage) page[offset] = 1;
  return microsPerPage(start, bytes);
}

// A pipe whose two ends close with it; each message is one double (0 where it only says "go").
struct Pipe {
  hoop::UniqueFd read;
  hoop::UniqueFd write;
  Pipe() {
    int ends[2];
    if (::pipe(ends) != 0) die("pipe");
    read = hoop::UniqueFd(ends[0]);
    write = hoop::UniqueFd(ends[1]);
  }
  void send(double value) const {
    if (::write(write.get(), &value, sizeof(value)) != sizeof(value)) die("write");
  }
  double receive() const {
    double value = 0;
    if (::read(read.get(), &value, sizeof(value)) != sizeof(value)) die("read");
    return value;
  }
};

// Runs `child` in a forked process, which reports one double through `toParent`; the parent
// runs `parent` meanwhile, then collects the child's double.
template <typename Child, typename Parent>
double withPeer(const Pipe& toParent, Child child, Parent parent) {
  const pid_t pid = ::fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    double value = 0;
    try {
      value = child();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "peer: %s\n", e.what());
      ::_exit(1);
    }
    toParent.send(value);
    ::_exit(0);  // not exit: the creator's segment, copied into this process, is not ours
  }
  parent();
  const double value = toParent.receive();
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "hoop-page-first-access: the peer process failed\n");
    std::exit(1);
  }
  return value;
}

// A POSIX shared-memory segment made and mapped as ShmSegment makes one, less its read of every
// page; the creator removes the name when it goes.
class Segment {
 public:
  static Segment create(size_t bytes) {
    static int made = 0;
    Segment segment;
    segment.name_ =
        "/hoop-page-first-access-" + std::to_string(::getpid()) + "-" + std::to_string(made++);
    const hoop::UniqueFd fd(::shm_open(segment.name_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
    if (!fd.valid()) die("shm_open");
    segment.creator_ = true;
    if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) die("ftruncate");
    if (::posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes)) != 0) die("posix_fallocate");
    segment.map(fd.get(), bytes);
    return segment;
  }
  static Segment open(const std::string& name, size_t bytes) {
    Segment segment;
    const hoop::UniqueFd fd(::shm_open(name.c_str(), O_RDWR, 0));
    if (!fd.valid()) die("shm_open");
    segment.map(fd.get(), bytes);
    return segment;
  }
  Segment(Segment&& other) noexcept
      : mapping_(std::move(other.mapping_)),
        name_(std::move(other.name_)),
        creator_(std::exchange(other.creator_, false)) {}
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  Segment& operator=(Segment&&) = delete;
  ~Segment() {
    if (creator_) ::shm_unlink(name_.c_str());
  }

  char* data() const { return static_cast<char*>(mapping_.get()); }
  const std::string& name() const { return name_; }

 private:
  Segment() = default;
  void map(int fd, size_t bytes) {
    void* address =
        ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (address == MAP_FAILED) die("mmap");
    mapping_ = hoop::Mapping(address, bytes);
  }

  hoop::Mapping mapping_;
  std::string name_;
  bool creator_ = false;
};

double peerFirstRead(size_t bytes) {
  const Segment segment = Segment::create(bytes);
  hoop::readEveryPage(segment.data(), bytes);
  const Pipe toParent;
  return withPeer(
      toParent,
      [&] {
        const Segment mine = Segment::open(segment.name(), bytes);
        return timedReadEveryPage(mine.data(), bytes);
      },
      [] {});
}

double peerReadsNewData(size_t bytes, bool readAtSetUp) {
  const Segment segment = Segment::create(bytes);
  const Pipe toParent;
  const Pipe toChild;
  return withPeer(
      toParent,
      [&] {
        const Segment mine = Segment::open(segment.name(), bytes);
        std::vector<char> copy(bytes, 1);  // every page written: the copy below faults none
        if (readAtSetUp) hoop::readEveryPage(mine.data(), bytes);
        toParent.send(0);   // mapped: the creator may write
        toChild.receive();  // written
        const auto start = Clock::now();
        std::memcpy(copy.data(), mine.data(), bytes);
        return microsPerPage(start, bytes);
      },
      [&] {
        toParent.receive();
        std::memset(segment.data(), 7, bytes);
        toChild.send(0);
      });
}

struct Figures {
  std::vector<double> values;
  void print(const char* name) {
    std::sort(values.begin(), values.end());
    std::printf("%-40s %8.2f   %.2f-%.2f\n", name, values[values.size() / 2], values.front(),
                values.back());
  }
};

int run(size_t bytes, int repeats) {
  Figures anonymous, first, second, peer, without, after;
  for (int r = 0; r < repeats; ++r) {
    anonymous.values.push_back(anonymousFirstWrite(bytes));
    const Segment segment = Segment::create(bytes);
    first.values.push_back(timedReadEveryPage(segment.data(), bytes));
    second.values.push_back(timedReadEveryPage(segment.data(), bytes));
    peer.values.push_back(peerFirstRead(bytes));
    without.values.push_back(peerReadsNewData(bytes, false));
    after.values.push_back(peerReadsNewData(bytes, true));
  }
  std::printf(
      "# hoop-page-first-access: %zu KiB, %d repeats; us per 4 KiB page: median, "
      "min-max\n",
      bytes >> 10, repeats);
  anonymous.print("anonymous, first write");
  first.print("segment, first read");
  second.print("segment, second read");
  peer.print("peer, first read");
  without.print("peer reads new data, no set-up read");
  after.print("peer reads new data, after set-up read");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = 8 << 20;
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc || (flag != "--size" && flag != "--repeats")) {
      std::fprintf(stderr, "usage: hoop-page-first-access [--size 8M] [--repeats 5]\n");
      return 2;
    }
    const std::string value = argv[++i];
    if (flag == "--size") {
      const std::optional<size_t> parsed = hoop::parseByteSize(value);
      if (!parsed || *parsed < kPage) {
        std::fprintf(stderr, "--size: not a size of at least 4K: '%s'\n", value.c_str());
        return 2;
      }
      bytes = *parsed / kPage * kPage;
    } else {
      repeats = std::atoi(value.c_str());
      if (repeats < 1) {
        std::fprintf(stderr, "--repeats: not a positive count: '%s'\n", value.c_str());
        return 2;
      }
    }
  }
  try {
    return run(bytes, repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hoop-page-first-access: %s\n", e.what());
    return 1;
  }
}
