// Fusion's effect: N small allreduces issued one by one on the communicator, against the same N
// submitted to the training engine with fusion on and off, and with the response cache off.
// Prints the median time per round (all N tensors reduced) from rank 0, after checking every
// result exactly.
//
//   hooprun -np 4 ./hoop-train-fusion-bench --tensors 200 --bytes 4096 --rounds 50
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hoop/train.hpp"

namespace {

struct Options {
  size_t tensors = 200;
  size_t bytes = 4096;
  size_t rounds = 50;
  double cycleTimeMs = 1.0;
};

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

class Tensors {
 public:
  Tensors(const Options& options, int rank, int size)
      : count_(options.bytes / sizeof(float)), rank_(rank), size_(size) {
    data_.resize(options.tensors, std::vector<float>(count_));
  }
  void fill(size_t round) {
    for (size_t t = 0; t < data_.size(); ++t) {
      std::fill(data_[t].begin(), data_[t].end(), static_cast<float>(t + round + rank_));
    }
  }
  // Every element is the sum over ranks of t + round + rank.
  bool check(size_t round) const {
    for (size_t t = 0; t < data_.size(); ++t) {
      const float expected = static_cast<float>(size_ * (t + round) + size_ * (size_ - 1) / 2);
      for (float v : data_[t]) {
        if (v != expected) return false;
      }
    }
    return true;
  }
  std::vector<std::vector<float>>& all() { return data_; }
  size_t count() const { return count_; }

 private:
  size_t count_;
  int rank_;
  int size_;
  std::vector<std::vector<float>> data_;
};

double individually(hoop::Communicator& comm, Tensors& tensors, const Options& options, bool& ok) {
  std::vector<double> times;
  for (size_t round = 0; round < options.rounds; ++round) {
    tensors.fill(round);
    comm.barrier();
    const auto start = Clock::now();
    for (auto& t : tensors.all()) comm.allReduce(std::span<float>(t));
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    ok = ok && tensors.check(round);
  }
  return median(times);
}

double throughEngine(hoop::Communicator& comm, Tensors& tensors, const Options& options,
                     size_t threshold, size_t cacheCapacity, bool& ok,
                     hoop::train::EngineStats& stats) {
  hoop::train::EngineOptions engineOptions;
  engineOptions.fusionThresholdBytes = threshold;
  engineOptions.cacheCapacity = cacheCapacity;
  engineOptions.cycleTimeMs = options.cycleTimeMs;
  hoop::train::Engine engine(comm.handle(), engineOptions);
  std::vector<double> times;
  std::vector<hoop::train::Engine::Handle> handles;
  for (size_t round = 0; round < options.rounds; ++round) {
    tensors.fill(round);
    engine.wait(engine.barrier("round"));
    const auto start = Clock::now();
    handles.clear();
    for (size_t t = 0; t < tensors.all().size(); ++t) {
      auto& data = tensors.all()[t];
      handles.push_back(engine.allReduce("t" + std::to_string(t), data.data(), data.data(),
                                         data.size(), hoopFloat32, hoopSum));
    }
    for (auto h : handles) engine.wait(h);
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    ok = ok && tensors.check(round);
  }
  stats = engine.stats();
  return median(times);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--tensors") options.tensors = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--bytes") options.bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--rounds") options.rounds = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--cycle-ms") options.cycleTimeMs = std::strtod(argv[i + 1], nullptr);
  }
  try {
    auto comm = hoop::Communicator::fromEnvironment();
    Tensors tensors(options, comm.rank(), comm.size());
    bool ok = true;
    hoop::train::EngineStats fused, unfused, uncached;
    const double direct = individually(comm, tensors, options, ok);
    const double withFusion =
        throughEngine(comm, tensors, options, size_t{64} << 20, 1024, ok, fused);
    const double withoutFusion = throughEngine(comm, tensors, options, 0, 1024, ok, unfused);
    const double withoutCache =
        throughEngine(comm, tensors, options, size_t{64} << 20, 0, ok, uncached);
    if (comm.rank() == 0) {
      std::printf("%d ranks, %zu tensors of %zu B, %zu rounds, cycle %.2f ms: median per round\n",
                  comm.size(), options.tensors, options.bytes, options.rounds, options.cycleTimeMs);
      std::printf("  hoopAllReduce one by one : %8.3f ms (%zu calls per round)\n", direct,
                  options.tensors);
      std::printf(
          "  engine, fusion off       : %8.3f ms (%.1f calls per round)\n", withoutFusion,
          static_cast<double>(unfused.collectiveCalls) / static_cast<double>(options.rounds));
      std::printf("  engine, fusion 64 MiB    : %8.3f ms (%.1f calls per round)\n", withFusion,
                  static_cast<double>(fused.collectiveCalls) / static_cast<double>(options.rounds));
      std::printf(
          "  same, response cache off : %8.3f ms (%.1f name exchanges per round)\n", withoutCache,
          static_cast<double>(uncached.negotiationRounds) / static_cast<double>(options.rounds));
    }
    std::printf("rank %d: results %s\n", comm.rank(), ok ? "exact (ok)" : "WRONG");
    return ok ? 0 : 1;
  } catch (const hoop::Exception& e) {
    std::fprintf(stderr, "hoop error %d: %s\n", e.code(), e.what());
    return 1;
  }
}
