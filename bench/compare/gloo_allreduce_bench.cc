// Gloo allreduce (float32, sum) size sweep: the Gloo baseline hoop is compared against.
//
// Ranks are separate processes that meet through a gloo::rendezvous::FileStore and talk over
// Gloo's TCP transport bound to loopback. Timing mirrors mpi_allreduce_bench.c: per size one
// verified call, warm-ups, then k timed iterations each preceded by gloo::barrier; the time of an
// iteration is the slowest rank's (Gloo allreduce MAX over the per-iteration times) and the
// reported figure is the median. k >= -n, raised for small sizes so a size runs >= -m seconds.
//
// Algorithms (--algo, "all" runs each and prints one table per algorithm):
//   ring, ring_chunked, halving_doubling, bcube  the classic gloo::Allreduce* classes, set up
//                                                once per size (buffers registered once), run()
//                                                per iteration; in place.
//   new_ring, new_bcube                          gloo::allreduce(AllreduceOptions), the API
//                                                PyTorch's ProcessGroupGloo uses; in place.
//
// Transport mode (--mode): async (default; Gloo's TCP event loop thread receives, the caller
// waits on a condition variable, as in PyTorch), sync (the caller receives on its own thread)
// or busypoll (sync, spinning on non-blocking reads). sync/busypoll only serve the classic
// algorithms: Gloo's unbound buffers (gloo::allreduce, gloo::barrier) refuse sync pairs, so in
// those modes the barrier is gloo::BarrierAllToAll and the timing max a classic ring.
// A sync pair writes on the caller's thread until the message is out, so two ranks that send
// each other more than the socket buffers hold deadlock (seen at 32 MiB with halving_doubling);
// sync/busypoll therefore stop at --sync-max bytes (default 2M): they are a latency option.
//
// Rank and size: --rank/--size, else RANK/WORLD_SIZE, else OMPI_COMM_WORLD_RANK/SIZE.
// Store: --store DIR, else GLOO_STORE_DIR. Use a fresh directory per job.
#include <gloo/allreduce.h>
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/common/error.h>
#include <gloo/config.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr long kMaxIters = 200000;
const char* const kAllAlgos[] = {"ring",  "ring_chunked", "halving_doubling",
                                 "bcube", "new_ring",     "new_bcube"};

struct Options {
  size_t minBytes = 8;
  size_t maxBytes = size_t{256} << 20;
  size_t factor = 4;
  long iters = 20;
  long warmup = 5;
  double minSeconds = 0.2;
  double maxSeconds = 0.0;
  std::string algo = "all";
  std::string store;
  std::string host = "127.0.0.1";
  std::string mode = "async";
  size_t syncMaxBytes = size_t{2} << 20;
  int rank = -1;
  int size = -1;
  int timeoutSec = 600;
};

bool parseSize(const char* s, size_t* out) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s) return false;
  switch (*end) {
    case 'k':
    case 'K':
      v <<= 10;
      ++end;
      break;
    case 'm':
    case 'M':
      v <<= 20;
      ++end;
      break;
    case 'g':
    case 'G':
      v <<= 30;
      ++end;
      break;
    default: break;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return false;
  *out = static_cast<size_t>(v);
  return true;
}

int envInt(const char* a, const char* b) {
  const char* v = std::getenv(a);
  if (v == nullptr) v = std::getenv(b);
  return v == nullptr ? -1 : std::atoi(v);
}

void usage(const char* argv0) {
  std::fprintf(
      stderr,
      "usage: %s [--algo ring|ring_chunked|halving_doubling|bcube|new_ring|new_bcube|all]\n"
      "          [-b minbytes] [-e maxbytes] [-f factor] [-n iters] [-w warmup]\n"
      "          [-m minsec] [-M maxsec]\n"
      "          [--mode async|sync|busypoll] [--sync-max bytes] [--store DIR]\n"
      "          [--rank R --size N] [--host 127.0.0.1] [--timeout SEC]\n"
      "  defaults: --algo all -b 8 -e 256M -f 4 -n 20 -w 5 -m 0.2 -M 0 --mode async\n"
      "  --sync-max 2M; sizes take K/M/G\n"
      "  -m: raise iterations so a size runs >= minsec; -M: lower them (to >= 3) so it\n"
      "  runs <= maxsec (0: no cap)\n"
      "  rank/size from RANK/WORLD_SIZE or OMPI_COMM_WORLD_RANK/SIZE, store from "
      "GLOO_STORE_DIR\n",
      argv0);
}

bool parseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help" || i + 1 >= argc) return false;
    const char* v = argv[++i];
    size_t sz = 0;
    if (a == "-b" && parseSize(v, &sz)) {
      o->minBytes = sz;
    } else if (a == "-e" && parseSize(v, &sz)) {
      o->maxBytes = sz;
    } else if (a == "-f" && parseSize(v, &sz) && sz >= 2) {
      o->factor = sz;
    } else if (a == "-n" && std::atol(v) > 0) {
      o->iters = std::atol(v);
    } else if (a == "-w" && std::atol(v) >= 0) {
      o->warmup = std::atol(v);
    } else if (a == "-m" && std::atof(v) >= 0) {
      o->minSeconds = std::atof(v);
    } else if (a == "-M" && std::atof(v) >= 0) {
      o->maxSeconds = std::atof(v);
    } else if (a == "--algo") {
      o->algo = v;
    } else if (a == "--mode" && (std::string(v) == "async" || std::string(v) == "sync" ||
                                 std::string(v) == "busypoll")) {
      o->mode = v;
    } else if (a == "--sync-max" && parseSize(v, &sz)) {
      o->syncMaxBytes = sz;
    } else if (a == "--store") {
      o->store = v;
    } else if (a == "--host") {
      o->host = v;
    } else if (a == "--rank") {
      o->rank = std::atoi(v);
    } else if (a == "--size") {
      o->size = std::atoi(v);
    } else if (a == "--timeout" && std::atoi(v) > 0) {
      o->timeoutSec = std::atoi(v);
    } else {
      return false;
    }
  }
  bool known = o->algo == "all";
  for (const char* algo : kAllAlgos) known = known || o->algo == algo;
  if (!known) {
    std::fprintf(stderr, "unknown --algo '%s'\n", o->algo.c_str());
    return false;
  }
  if (o->rank < 0) o->rank = envInt("RANK", "OMPI_COMM_WORLD_RANK");
  if (o->size < 0) o->size = envInt("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE");
  if (o->store.empty() && std::getenv("GLOO_STORE_DIR") != nullptr) {
    o->store = std::getenv("GLOO_STORE_DIR");
  }
  if (o->rank < 0 || o->size < 1 || o->rank >= o->size) {
    std::fprintf(stderr, "rank/size not set (RANK/WORLD_SIZE or --rank/--size)\n");
    return false;
  }
  if (o->store.empty()) {
    std::fprintf(stderr, "no store directory (GLOO_STORE_DIR or --store)\n");
    return false;
  }
  // The classic algorithms count elements and bytes in int.
  if (o->minBytes < sizeof(float) || o->maxBytes < o->minBytes || o->maxBytes > INT_MAX) {
    std::fprintf(stderr, "sizes must satisfy 4 <= -b <= -e <= %d bytes\n", INT_MAX);
    return false;
  }
  return true;
}

// Small integers, so every summation order gives the same float exactly.
float inputValue(int rank, size_t i) { return static_cast<float>((i * 7 + size_t(rank) * 3) % 23); }

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One allreduce algorithm bound to a buffer of `count` floats, reusable across iterations.
using Runner = std::function<void()>;

Runner makeRunner(const std::string& algo, const std::shared_ptr<gloo::Context>& ctx, float* buf,
                  int count) {
  std::vector<float*> ptrs{buf};
  if (algo == "ring") {
    auto a = std::make_shared<gloo::AllreduceRing<float>>(ctx, ptrs, count);
    return [a] { a->run(); };
  }
  if (algo == "ring_chunked") {
    auto a = std::make_shared<gloo::AllreduceRingChunked<float>>(ctx, ptrs, count);
    return [a] { a->run(); };
  }
  if (algo == "halving_doubling") {
    auto a = std::make_shared<gloo::AllreduceHalvingDoubling<float>>(ctx, ptrs, count);
    return [a] { a->run(); };
  }
  if (algo == "bcube") {
    auto a = std::make_shared<gloo::AllreduceBcube<float>>(ctx, ptrs, count);
    return [a] { a->run(); };
  }
  if (algo == "new_ring" || algo == "new_bcube") {
    auto opts = std::make_shared<gloo::AllreduceOptions>(ctx);
    opts->setAlgorithm(algo == "new_ring" ? gloo::AllreduceOptions::Algorithm::RING
                                          : gloo::AllreduceOptions::Algorithm::BCUBE);
    opts->setOutput(buf, static_cast<size_t>(count));
    opts->setReduceFunction(
        [](void* c, const void* a, const void* b, size_t n) { gloo::sum<float>(c, a, b, n); });
    return [opts] { gloo::allreduce(*opts); };
  }
  throw std::invalid_argument("unknown algorithm '" + algo + "'");
}

// The barrier and the cross-rank max the timing needs, in whichever form the mode allows.
class Control {
 public:
  Control(std::shared_ptr<gloo::Context> ctx, bool async) : ctx_(std::move(ctx)), async_(async) {
    if (!async_) barrier_ = std::make_unique<gloo::BarrierAllToAll>(ctx_);
  }

  void barrier() {
    if (async_) {
      gloo::BarrierOptions opts(ctx_);
      gloo::barrier(opts);
    } else {
      barrier_->run();
    }
  }

  // Element-wise max across ranks, in place.
  void max(double* v, size_t n) {
    if (async_) {
      gloo::AllreduceOptions opts(ctx_);
      opts.setOutput(v, n);
      opts.setReduceFunction(
          [](void* c, const void* a, const void* b, size_t k) { gloo::max<double>(c, a, b, k); });
      gloo::allreduce(opts);
    } else {
      gloo::AllreduceRing<double>(ctx_, {v}, int(n), gloo::ReductionFunction<double>::max).run();
    }
  }

 private:
  std::shared_ptr<gloo::Context> ctx_;
  bool async_;
  std::unique_ptr<gloo::BarrierAllToAll> barrier_;
};

// Runs one algorithm over the size sweep; returns false on a wrong result.
bool sweep(const Options& o, const std::string& algo, const std::shared_ptr<gloo::Context>& ctx,
           Control& control) {
  const int rank = ctx->rank;
  const int nranks = ctx->size;
  const size_t maxCount = o.maxBytes / sizeof(float);
  std::vector<float> pristine(maxCount);
  for (size_t i = 0; i < maxCount; ++i) pristine[i] = inputValue(rank, i);
  std::vector<float> buf(maxCount);
  std::vector<double> times(kMaxIters);

  if (rank == 0) {
    std::printf("# algo=%s mode=%s\n", algo.c_str(), o.mode.c_str());
    std::printf("# %12s %12s %12s %10s %10s\n", "bytes", "count", "median_us", "algbw_GBs",
                "busbw_GBs");
    std::fflush(stdout);
  }

  bool allOk = true;
  for (size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= o.factor) {
    if (o.mode != "async" && bytes > o.syncMaxBytes) {
      if (rank == 0) {
        std::printf("# sizes above %zu bytes skipped: sync pairs can deadlock on large messages\n",
                    o.syncMaxBytes);
      }
      break;
    }
    const int count = static_cast<int>(bytes / sizeof(float));
    const size_t realBytes = size_t(count) * sizeof(float);
    Runner run = makeRunner(algo, ctx, buf.data(), count);

    // Correctness, once per size. The algorithms reduce in place, so restore the input first.
    std::copy_n(pristine.begin(), count, buf.begin());
    run();
    double bad = 0;
    for (int i = 0; i < count; ++i) {
      float want = 0.0f;
      for (int r = 0; r < nranks; ++r) want += inputValue(r, size_t(i));
      if (buf[i] != want) {
        bad = 1;
        break;
      }
    }
    control.max(&bad, 1);
    if (bad != 0) {
      if (rank == 0)
        std::fprintf(stderr, "WRONG RESULT algo=%s bytes=%zu\n", algo.c_str(), realBytes);
      allOk = false;
    }

    // Each iteration restores the input outside the timed region, so the values stay small
    // integers (no overflow to inf) and every iteration reduces the same data.
    auto iteration = [&]() -> double {
      std::copy_n(pristine.begin(), count, buf.begin());
      control.barrier();
      double t0 = seconds();
      run();
      return seconds() - t0;
    };

    // Warm-ups double as the estimate that sets the iteration count (same on every rank).
    const long estRuns = o.warmup > 0 ? o.warmup : 1;
    double t0 = seconds();
    for (long i = 0; i < estRuns; ++i) iteration();
    double perIter = (seconds() - t0) / double(estRuns);
    control.max(&perIter, 1);
    long iters = o.iters;
    if (perIter > 0 && double(iters) * perIter < o.minSeconds) {
      iters = long(std::ceil(o.minSeconds / perIter));
    }
    if (o.maxSeconds > 0 && double(iters) * perIter > o.maxSeconds) {
      iters = std::max(3L, long(o.maxSeconds / perIter));
    }
    iters = std::min(iters, kMaxIters);

    for (long i = 0; i < iters; ++i) times[i] = iteration();
    control.max(times.data(), size_t(iters));

    if (rank == 0) {
      std::sort(times.begin(), times.begin() + iters);
      double med = (iters % 2) ? times[iters / 2] : 0.5 * (times[iters / 2 - 1] + times[iters / 2]);
      double algbw = double(realBytes) / med / 1e9;
      double busbw = algbw * 2.0 * (nranks - 1) / nranks;
      std::printf("  %12zu %12d %12.2f %10.3f %10.3f\n", realBytes, count, med * 1e6, algbw, busbw);
      std::fflush(stdout);
    }
    if (bytes > SIZE_MAX / o.factor) break;
  }
  return allOk;
}

int run(const Options& o) {
  const bool async = o.mode == "async";
  std::vector<std::string> algos;
  if (o.algo == "all") {
    for (const char* algo : kAllAlgos) {
      if (async || !std::string_view(algo).starts_with("new_")) algos.push_back(algo);
    }
  } else {
    algos.push_back(o.algo);
  }

  // TCP transport on loopback only.
  gloo::transport::tcp::attr attr;
  attr.hostname = o.host;
  attr.ai_family = AF_INET;
  auto dev = gloo::transport::tcp::CreateDevice(attr);

  gloo::rendezvous::FileStore fileStore(o.store);
  gloo::rendezvous::PrefixStore store("hoop-compare", fileStore);
  auto ctx = std::make_shared<gloo::rendezvous::Context>(o.rank, o.size);
  ctx->setTimeout(std::chrono::seconds(o.timeoutSec));
  ctx->connectFullMesh(store, dev);
  if (!async) {
    for (const auto& algo : algos) {
      if (algo.starts_with("new_")) {
        std::fprintf(stderr, "--algo %s needs --mode async (unbound buffers refuse sync pairs)\n",
                     algo.c_str());
        return 2;
      }
    }
    for (int peer = 0; peer < o.size; ++peer) {
      if (peer != o.rank) ctx->getPair(peer)->setSync(true, o.mode == "busypoll");
    }
  }
  Control control(ctx, async);
  control.barrier();
  // Everyone is connected: remove the rendezvous files so the directory can be reused.
  for (const auto& path : fileStore.getAllKeyFilePaths()) ::unlink(path.c_str());

  if (o.rank == 0) {
    std::printf("# peer=gloo version=%d.%d.%d transport=tcp host=%s mode=%s\n", GLOO_VERSION_MAJOR,
                GLOO_VERSION_MINOR, GLOO_VERSION_PATCH, o.host.c_str(), o.mode.c_str());
    std::printf(
        "# gloo allreduce float32 sum, in-place, ranks=%d warmup=%ld iters=%ld minsec=%g "
        "maxsec=%g\n",
        o.size, o.warmup, o.iters, o.minSeconds, o.maxSeconds);
    std::printf(
        "# time = median over iterations of the slowest rank, barrier before each iteration\n");
    std::fflush(stdout);
  }

  bool ok = true;
  for (const auto& algo : algos) {
    try {
      ok = sweep(o, algo, ctx, control) && ok;
    } catch (const std::exception& e) {
      // A failed collective leaves the pairs unusable: report and stop (run.sh starts one job
      // per algorithm, so the other algorithms still run).
      if (o.rank == 0) std::printf("# algo=%s failed: %s\n", algo.c_str(), e.what());
      std::fflush(stdout);
      std::fprintf(stderr, "rank %d: algo=%s failed: %s\n", o.rank, algo.c_str(), e.what());
      return 3;
    }
  }
  control.barrier();
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parseArgs(argc, argv, &o)) {
    usage(argv[0]);
    return 2;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {  // rendezvous or connection failure, timeout
    std::fprintf(stderr, "rank %d: %s\n", o.rank, e.what());
    return 3;
  }
}
