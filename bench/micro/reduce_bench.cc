// hoop-micro-reduce: throughput of the CPU reduction kernels (device/cpu/reduce.h) for every
// datatype and operator, beside memcpy on the same buffers, so a kernel reads as a fraction of
// what the memory system can move at that size.
//
// Every kernel runs at each CPU level this machine has (portable, avx2, avx512: the level is
// forced through reduceCopyFinalAt, whatever HOOP_CPU_ISA says).
//
// Every benchmark works on distinct buffers (out, a, b; out2 for the fused form) of the same byte
// size; memcpy copies a into out. bytes_per_second counts bytes read plus bytes written: 3 x size
// for a reduction (two inputs, one output), 4 x size for reduce-copy (two outputs), 2 x size for
// memcpy. A reduction that keeps up with the memory system therefore shows the same
// bytes_per_second as memcpy, whatever its type.
//
// Names are kind/level/type/op/bytes (memcpy/bytes for the baseline) so they sort into groups.
#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "base/half.h"
#include "base/types.h"
#include "device/cpu/cpu_isa.h"
#include "device/cpu/reduce.h"

namespace hoop {
namespace {

// 4 KiB stays in L1, 256 KiB x 3 buffers in L2 (or a fast L3), 64 MiB x 3 in DRAM (beyond the
// last-level cache of any current server CPU, 32 MiB per CCD on Zen 4).
constexpr std::array<size_t, 3> kSizes = {size_t{4} << 10, size_t{256} << 10, size_t{64} << 20};

// kAvg goes through reduceFinal with this divisor (a 4-rank job's last step); in reduce() it is
// a plain sum, which the sum rows already measure.
constexpr size_t kAvgDivisor = 4;

constexpr std::array<DataType, kNumDataTypes> kTypes = {
    DataType::kInt8,    DataType::kUint8,   DataType::kInt32,   DataType::kUint32,
    DataType::kInt64,   DataType::kUint64,  DataType::kFloat16, DataType::kFloat32,
    DataType::kFloat64, DataType::kBfloat16};
constexpr std::array<RedOp, kNumRedOps> kOps = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin,
                                                RedOp::kAvg};

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// One page-aligned buffer, so every size and type starts on the same footing (no split cache
// lines at the start, no 4K-aliasing lottery between runs).
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t bytes) : bytes_(bytes) {
    constexpr size_t kAlign = 4096;
    const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    memory_.reset(static_cast<std::byte*>(std::aligned_alloc(kAlign, rounded)));
    if (!memory_) throw std::bad_alloc();
  }
  std::byte* data() const { return memory_.get(); }
  size_t bytes() const { return bytes_; }

 private:
  std::unique_ptr<std::byte[], FreeDeleter> memory_;
  size_t bytes_;
};

template <typename T>
void fillAs(std::byte* out, size_t count, uint32_t seed, T (*make)(uint32_t)) {
  T* typed = reinterpret_cast<T*>(out);
  for (size_t i = 0; i < count; ++i) typed[i] = make(static_cast<uint32_t>(i) * 2654435761u + seed);
}

// A float in [1, 2): products stay finite and normal in every type (half included), so no row
// measures a slow path for infinities or subnormals.
float unitFloat(uint32_t r) { return 1.0f + static_cast<float>(r >> 8) * 0x1p-24f; }

// Writes `bytes` of well-behaved values of `type`. This also touches every page, so page faults
// happen here and not in the timed loop.
void fillInputs(const AlignedBuffer& buffer, DataType type, uint32_t seed) {
  std::byte* p = buffer.data();
  const size_t count = buffer.bytes() / dataTypeSize(type);
  switch (type) {
    case DataType::kInt8:
    case DataType::kUint8:
      fillAs<uint8_t>(p, count, seed, [](uint32_t r) { return static_cast<uint8_t>(r >> 24); });
      break;
    case DataType::kInt32:
    case DataType::kUint32: fillAs<uint32_t>(p, count, seed, [](uint32_t r) { return r; }); break;
    case DataType::kInt64:
    case DataType::kUint64:
      fillAs<uint64_t>(p, count, seed,
                       [](uint32_t r) { return uint64_t{r} * 0x9e3779b97f4a7c15u; });
      break;
    case DataType::kFloat16:
      fillAs<uint16_t>(p, count, seed, [](uint32_t r) { return floatToHalf(unitFloat(r)); });
      break;
    case DataType::kBfloat16:
      fillAs<uint16_t>(p, count, seed, [](uint32_t r) { return floatToBf16(unitFloat(r)); });
      break;
    case DataType::kFloat32: fillAs<float>(p, count, seed, unitFloat); break;
    case DataType::kFloat64:
      fillAs<double>(p, count, seed, [](uint32_t r) { return double{unitFloat(r)}; });
      break;
  }
}

// The buffers every benchmark here uses, filled before timing starts (out2: only when asked).
struct Operands {
  Operands(size_t bytes, DataType type, bool secondOutput = false)
      : out(bytes), out2(secondOutput ? bytes : 0), a(bytes), b(bytes) {
    fillInputs(a, type, 1);
    fillInputs(b, type, 2);
    std::memset(out.data(), 0, bytes);
    if (secondOutput) std::memset(out2.data(), 0, bytes);
  }
  AlignedBuffer out;
  AlignedBuffer out2;
  AlignedBuffer a;
  AlignedBuffer b;
};

void memcpyBench(benchmark::State& state, size_t bytes) {
  Operands buffers(bytes, DataType::kUint8);
  for (auto _ : state) {
    std::memcpy(buffers.out.data(), buffers.a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * bytes));
}

// kAvg goes through the final form with kAvgDivisor; every other op ignores the divisor.
size_t divisorFor(RedOp op) { return op == RedOp::kAvg ? kAvgDivisor : 1; }

void reduceBench(benchmark::State& state, CpuIsa isa, size_t bytes, DataType type, RedOp op) {
  Operands buffers(bytes, type);
  const size_t count = bytes / dataTypeSize(type);
  for (auto _ : state) {
    reduceCopyFinalAt(isa, buffers.out.data(), nullptr, buffers.a.data(), buffers.b.data(), count,
                      type, op, divisorFor(op));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 3 * bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * count));
}

// The fused form recvReduceCopySend uses: one pass, two outputs.
void reduceCopyBench(benchmark::State& state, CpuIsa isa, size_t bytes, DataType type, RedOp op) {
  Operands buffers(bytes, type, /*secondOutput=*/true);
  const size_t count = bytes / dataTypeSize(type);
  for (auto _ : state) {
    reduceCopyFinalAt(isa, buffers.out.data(), buffers.out2.data(), buffers.a.data(),
                      buffers.b.data(), count, type, op, divisorFor(op));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 4 * bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * count));
}

void registerAll() {
  for (size_t bytes : kSizes) {
    benchmark::RegisterBenchmark(("memcpy/" + std::to_string(bytes)).c_str(), memcpyBench, bytes);
  }
  const CpuIsa best = detectCpuIsa();
  for (const CpuIsa isa : {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kNeon}) {
    if (!cpuIsaIncludes(best, isa)) continue;
    const std::string level = cpuIsaName(isa);
    for (DataType type : kTypes) {
      for (RedOp op : kOps) {
        for (size_t bytes : kSizes) {
          const std::string name = "reduce/" + level + "/" + std::string(dataTypeName(type)) + "/" +
                                   std::string(redOpName(op)) + "/" + std::to_string(bytes);
          benchmark::RegisterBenchmark(name.c_str(), reduceBench, isa, bytes, type, op);
        }
      }
    }
    for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBfloat16}) {
      for (size_t bytes : kSizes) {
        const std::string name = "reducecopy/" + level + "/" + std::string(dataTypeName(type)) +
                                 "/sum/" + std::to_string(bytes);
        benchmark::RegisterBenchmark(name.c_str(), reduceCopyBench, isa, bytes, type, RedOp::kSum);
      }
    }
  }
}

}  // namespace
}  // namespace hoop

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("hoop_reduce_avg",
                              "reduceFinal, divisor " + std::to_string(hoop::kAvgDivisor));
  benchmark::AddCustomContext("hoop_cpu_isa_detected", hoop::cpuIsaName(hoop::detectCpuIsa()));
  hoop::registerAll();
  // A filter that matches nothing is a mistake (a renamed benchmark, a CTest smoke run testing
  // nothing): fail instead of printing an empty table.
  if (benchmark::RunSpecifiedBenchmarks() == 0) return 1;
  benchmark::Shutdown();
  return 0;
}
