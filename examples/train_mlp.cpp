// Data-parallel training of a small MLP in plain C++ on hoop's training engine: every rank trains
// on its own shard of a synthetic two-class problem, gradients are averaged by a GradientReducer
// as backpropagation produces them (last layer first), and every rank applies the same SGD step.
// At the end every rank prints a hash of its parameters; they must be bitwise identical.
//
//   hooprun -np 4 ./train_mlp --steps 300 --hidden 64 --layers 2 --batch 32
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <hoop/train.hpp>
#include <string>
#include <vector>

namespace {

struct Options {
  size_t steps = 300;
  size_t hidden = 64;
  size_t layers = 2;  // hidden layers
  size_t batch = 32;  // per rank
  size_t inputs = 16;
  size_t samplesPerRank = 1024;
  float learningRate = 0.1f;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const size_t value = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--steps") {
      options.steps = value;
    } else if (flag == "--hidden") {
      options.hidden = value;
    } else if (flag == "--layers") {
      options.layers = value;
    } else if (flag == "--batch") {
      options.batch = value;
    } else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return options;
}

// A counter-based generator: the same (seed, index) gives the same number on every rank.
uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
float uniform(uint64_t seed, uint64_t index) {  // in [-1, 1)
  return static_cast<float>(splitmix(seed * 0x100000001b3ull + index) >> 40) / 8388608.0f - 1.0f;
}

// Global sample g: inputs uniform in [-1, 1); the class is which side of a fixed plane it lies on.
void makeSample(const Options& o, uint64_t g, float* x, int* label) {
  float side = 0;
  for (size_t j = 0; j < o.inputs; ++j) {
    x[j] = uniform(1, g * o.inputs + j);
    side += x[j] * (static_cast<float>(j % 3) - 1.0f + 0.25f);
  }
  *label = side > 0 ? 1 : 0;
}

struct Layer {
  size_t in, out;
  std::vector<float> w, b, gw, gb;  // w is out x in, row-major
  std::vector<float> z, a;          // pre- and post-activation for the current batch
};

uint64_t fnv1a(const void* data, size_t bytes, uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  return hash;
}

int run(const Options& o) {
  auto comm = hoop::Communicator::fromEnvironment();
  const int rank = comm.rank();
  const int size = comm.size();
  hoop::train::Engine engine(comm.handle());

  // Layers D -> H -> ... -> H -> 2. Each rank starts from its own random weights;
  // broadcastParameters makes them rank 0's.
  std::vector<Layer> net;
  for (size_t l = 0; l <= o.layers; ++l) {
    Layer layer;
    layer.in = l == 0 ? o.inputs : o.hidden;
    layer.out = l == o.layers ? 2 : o.hidden;
    layer.w.resize(layer.in * layer.out);
    layer.b.assign(layer.out, 0.0f);
    const float scale = std::sqrt(2.0f / static_cast<float>(layer.in));
    for (size_t i = 0; i < layer.w.size(); ++i) {
      layer.w[i] = scale * uniform(100 + static_cast<uint64_t>(rank) * 1000 + l, i);
    }
    layer.gw.resize(layer.w.size());
    layer.gb.resize(layer.b.size());
    net.push_back(std::move(layer));
  }
  std::vector<hoop::train::NamedBuffer> parameters;
  hoop::train::GradientReducer reducer(engine, hoopAvg);
  for (size_t l = 0; l < net.size(); ++l) {
    const std::string name = "layer" + std::to_string(l);
    parameters.push_back({name + ".weight", net[l].w.data(), net[l].w.size(), hoopFloat32});
    parameters.push_back({name + ".bias", net[l].b.data(), net[l].b.size(), hoopFloat32});
    reducer.registerBuffer(name + ".weight.grad", net[l].gw.data(), net[l].gw.size(), hoopFloat32);
    reducer.registerBuffer(name + ".bias.grad", net[l].gb.data(), net[l].gb.size(), hoopFloat32);
  }
  hoop::train::broadcastParameters(engine, parameters, 0);

  // This rank's shard: global samples rank, rank + size, rank + 2 size, ...
  std::vector<float> x(o.samplesPerRank * o.inputs);
  std::vector<int> y(o.samplesPerRank);
  for (size_t k = 0; k < o.samplesPerRank; ++k) {
    makeSample(o, k * static_cast<uint64_t>(size) + static_cast<uint64_t>(rank), &x[k * o.inputs],
               &y[k]);
  }

  const size_t B = o.batch;
  std::vector<float> input(B * o.inputs), delta, previousDelta;
  std::vector<int> labels(B);
  std::vector<float> losses;
  std::vector<double> stepMs;
  for (size_t step = 0; step < o.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < B; ++i) {
      const size_t k = (step * B + i) % o.samplesPerRank;
      std::memcpy(&input[i * o.inputs], &x[k * o.inputs], o.inputs * sizeof(float));
      labels[i] = y[k];
    }
    // Forward: ReLU between layers, softmax cross-entropy at the end.
    const float* a = input.data();
    for (size_t l = 0; l < net.size(); ++l) {
      Layer& L = net[l];
      L.z.assign(B * L.out, 0.0f);
      for (size_t i = 0; i < B; ++i) {
        for (size_t o2 = 0; o2 < L.out; ++o2) {
          float sum = L.b[o2];
          for (size_t j = 0; j < L.in; ++j) sum += L.w[o2 * L.in + j] * a[i * L.in + j];
          L.z[i * L.out + o2] = sum;
        }
      }
      L.a = L.z;
      if (l + 1 < net.size()) {
        for (float& v : L.a) v = std::max(v, 0.0f);
      }
      a = L.a.data();
    }
    float loss = 0;
    const Layer& last = net.back();
    delta.assign(B * 2, 0.0f);
    for (size_t i = 0; i < B; ++i) {
      const float z0 = last.z[i * 2], z1 = last.z[i * 2 + 1];
      const float m = std::max(z0, z1);
      const float e0 = std::exp(z0 - m), e1 = std::exp(z1 - m);
      const float p1 = e1 / (e0 + e1);
      const float p[2] = {1.0f - p1, p1};
      loss -= std::log(std::max(p[labels[i]], 1e-12f));
      for (int c = 0; c < 2; ++c) {
        delta[i * 2 + static_cast<size_t>(c)] =
            (p[c] - (labels[i] == c ? 1.0f : 0.0f)) / static_cast<float>(B);
      }
    }
    loss /= static_cast<float>(B);

    // Backward, last layer first; each layer's gradients start reducing as soon as they exist.
    for (size_t l = net.size(); l-- > 0;) {
      Layer& L = net[l];
      const float* below = l == 0 ? input.data() : net[l - 1].a.data();
      std::fill(L.gw.begin(), L.gw.end(), 0.0f);
      std::fill(L.gb.begin(), L.gb.end(), 0.0f);
      for (size_t i = 0; i < B; ++i) {
        for (size_t o2 = 0; o2 < L.out; ++o2) {
          const float d = delta[i * L.out + o2];
          L.gb[o2] += d;
          for (size_t j = 0; j < L.in; ++j) L.gw[o2 * L.in + j] += d * below[i * L.in + j];
        }
      }
      if (l > 0) {
        previousDelta.assign(B * L.in, 0.0f);
        for (size_t i = 0; i < B; ++i) {
          for (size_t j = 0; j < L.in; ++j) {
            float sum = 0;
            for (size_t o2 = 0; o2 < L.out; ++o2) {
              sum += delta[i * L.out + o2] * L.w[o2 * L.in + j];
            }
            previousDelta[i * L.in + j] = net[l - 1].z[i * L.in + j] > 0 ? sum : 0.0f;
          }
        }
        delta.swap(previousDelta);
      }
      const std::string name = "layer" + std::to_string(l);
      reducer.ready(name + ".weight.grad");
      reducer.ready(name + ".bias.grad");
    }
    reducer.synchronize();
    for (Layer& L : net) {
      for (size_t i = 0; i < L.w.size(); ++i) L.w[i] -= o.learningRate * L.gw[i];
      for (size_t i = 0; i < L.b.size(); ++i) L.b[i] -= o.learningRate * L.gb[i];
    }
    stepMs.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());

    // The loss averaged over ranks (outside the timed step).
    engine.wait(engine.allReduce("loss", &loss, &loss, 1, hoopFloat32, hoopAvg));
    losses.push_back(loss);
    if (rank == 0 && (step % 50 == 0 || step + 1 == o.steps)) {
      std::printf("step %zu: loss %.4f\n", step, static_cast<double>(loss));
    }
  }

  // Parameters must be bitwise identical everywhere: compare every rank's hash.
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const Layer& L : net) {
    hash = fnv1a(L.w.data(), L.w.size() * sizeof(float), hash);
    hash = fnv1a(L.b.data(), L.b.size() * sizeof(float), hash);
  }
  std::vector<uint64_t> hashes;
  engine.wait(engine.allGather("parameter.hash", &hash, 1, hoopUint64,
                               [&](const std::vector<size_t>& counts) -> void* {
                                 hashes.resize(counts.size());
                                 return hashes.data();
                               }));
  const bool identical =
      std::all_of(hashes.begin(), hashes.end(), [&](uint64_t h) { return h == hash; });

  const size_t window = std::min<size_t>(10, losses.size());
  float early = 0, late = 0;
  for (size_t i = 0; i < window; ++i) {
    early += losses[i] / static_cast<float>(window);
    late += losses[losses.size() - 1 - i] / static_cast<float>(window);
  }
  const bool learned = late < 0.5f * early;
  std::sort(stepMs.begin(), stepMs.end());
  const auto stats = engine.stats();
  std::printf(
      "rank %d of %d: parameter hash %016llx, %s on %d ranks, loss %.4f -> %.4f, median step "
      "%.3f ms, %zu collective calls, %zu fused, %zu cache hits (%s)\n",
      rank, size, static_cast<unsigned long long>(hash),
      identical ? "parameters identical" : "PARAMETERS DIFFER", size, static_cast<double>(early),
      static_cast<double>(late), stepMs[stepMs.size() / 2], stats.collectiveCalls,
      stats.fusedTensors, stats.cacheHits, identical && learned ? "ok" : "WRONG");
  return identical && learned ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const hoop::Exception& e) {
    std::fprintf(stderr, "hoop error %d: %s\n", e.code(), e.what());
    return 1;
  }
}
