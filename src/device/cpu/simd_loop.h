// The loop every explicit SIMD kernel shares (reduce_avx2.cc, reduce_avx512.cc, reduce_neon.cc):
// a Lane type says how `kWidth` elements are loaded into a compute vector and stored back, an Op
// combines two vectors. Included only by the per-ISA files, each compiled with its own -m flags:
// everything here has internal linkage, so no copy built for one ISA can stand in for another's (an
// inline function with external linkage could be merged across object files by the linker, and AVX
// code would then run where only the baseline was checked).
//
// A Lane provides:
//   using Storage;                          the element type in memory
//   using Vec;                              the compute vector for kWidth elements
//   static constexpr size_t kWidth;
//   static Vec load(const Storage* p);      unaligned (elements are only element-aligned)
//   static void store(Storage* p, Vec v);   unaligned
// and the ops sum, max, min on Vec; prod where the lane has a vector multiply (NEON has none for
// 64-bit integers); lanes that can divide (floats, 8- and 32-bit integers) also
// `using Divisor`, divisor(size_t) and divide(Vec, Divisor).
#pragma once

#include <cstddef>
#include <cstring>

#include "device/cpu/kernel_table.h"

namespace hoop::cpu_kernels {
namespace {

template <typename Lane>
struct SumOp {
  using Vec = typename Lane::Vec;
  Vec operator()(Vec a, Vec b) const { return Lane::sum(a, b); }
};
template <typename Lane>
struct ProdOp {
  using Vec = typename Lane::Vec;
  Vec operator()(Vec a, Vec b) const { return Lane::prod(a, b); }
};
template <typename Lane>
struct MaxOp {
  using Vec = typename Lane::Vec;
  Vec operator()(Vec a, Vec b) const { return Lane::max(a, b); }
};
template <typename Lane>
struct MinOp {
  using Vec = typename Lane::Vec;
  Vec operator()(Vec a, Vec b) const { return Lane::min(a, b); }
};
template <typename Lane>
struct SumThenDivideOp {
  using Vec = typename Lane::Vec;
  Vec operator()(Vec a, Vec b) const { return Lane::divide(Lane::sum(a, b), divisor); }
  typename Lane::Divisor divisor;
};

// finishAverage's x / divisor, run through the binary loop with the input given twice.
template <typename Lane>
struct DivideOp {
  using Vec = typename Lane::Vec;
  Vec operator()(Vec x, Vec) const { return Lane::divide(x, divisor); }
  typename Lane::Divisor divisor;
};

template <typename Lane, bool kSecondOutput, typename Op>
inline void simdLoop(typename Lane::Storage* out1, typename Lane::Storage* out2,
                     const typename Lane::Storage* a, const typename Lane::Storage* b, size_t count,
                     Op op) {
  using S = typename Lane::Storage;
  using Vec = typename Lane::Vec;
  constexpr size_t kWidth = Lane::kWidth;
  auto step = [&](size_t i) {
    const Vec r = op(Lane::load(a + i), Lane::load(b + i));
    Lane::store(out1 + i, r);
    if constexpr (kSecondOutput) Lane::store(out2 + i, r);
  };
  // One vector per iteration, not unrolled: unrolling by four made no difference in cache and was
  // slower streaming from DRAM (docs/design-notes.md), presumably because each load instruction
  // then strides by four vectors, which the prefetchers follow less well. Exact aliasing (out == a)
  // is safe: every element is loaded before it is stored, and no element is touched twice.
  size_t i = 0;
  for (; i + kWidth <= count; i += kWidth) step(i);
  if (i == count) return;
  // The last partial vector goes through a zero-padded copy: the same vector code, so the same
  // bits as the body, and nothing read or written beyond `count`. (Zeros are harmless in every
  // op, including the divide: 0 / d.)
  const size_t rest = count - i;
  S ta[kWidth] = {};
  S tb[kWidth] = {};
  S tout[kWidth];
  std::memcpy(ta, a + i, rest * sizeof(S));
  std::memcpy(tb, b + i, rest * sizeof(S));
  Lane::store(tout, op(Lane::load(ta), Lane::load(tb)));
  std::memcpy(out1 + i, tout, rest * sizeof(S));
  if constexpr (kSecondOutput) std::memcpy(out2 + i, tout, rest * sizeof(S));
}

template <typename Lane, template <typename> class OpT>
void simdKernel(void* out1, void* out2, const void* a, const void* b, size_t count,
                size_t divisor) {
  using S = typename Lane::Storage;
  OpT<Lane> op{};
  if constexpr (requires { op.divisor; }) op.divisor = Lane::divisor(divisor);
  auto* o1 = static_cast<S*>(out1);
  auto* o2 = static_cast<S*>(out2);
  auto* x = static_cast<const S*>(a);
  auto* y = static_cast<const S*>(b);
  if (o2 == nullptr) {
    simdLoop<Lane, false>(o1, o2, x, y, count, op);
  } else {
    simdLoop<Lane, true>(o1, o2, x, y, count, op);
  }
}

template <typename Lane>
void simdDivideKernel(void* out, const void* in, size_t count, size_t divisor) {
  simdKernel<Lane, DivideOp>(out, nullptr, in, in, count, divisor);
}

// sum, max, min for every lane; prod and the divides only where the lane can do them (the
// portable kernels fill the gaps).
template <typename Lane>
constexpr KernelSet simdKernels() {
  KernelSet k;
  k.sum = simdKernel<Lane, SumOp>;
  if constexpr (requires(typename Lane::Vec v) { Lane::prod(v, v); }) {
    k.prod = simdKernel<Lane, ProdOp>;
  }
  k.max = simdKernel<Lane, MaxOp>;
  k.min = simdKernel<Lane, MinOp>;
  if constexpr (requires { typename Lane::Divisor; }) {
    k.sumThenDivide = simdKernel<Lane, SumThenDivideOp>;
    k.divide = simdDivideKernel<Lane>;
  }
  return k;
}

// A level's whole table from the lane of each type, given in DataType's order.
template <typename Int8, typename Uint8, typename Int32, typename Uint32, typename Int64,
          typename Uint64, typename F16, typename F32, typename F64, typename Bf16>
constexpr KernelTable simdKernelTable() {
  KernelTable t{};
  auto set = [&t](DataType type, KernelSet k) { t[static_cast<size_t>(type)] = k; };
  set(DataType::kInt8, simdKernels<Int8>());
  set(DataType::kUint8, simdKernels<Uint8>());
  set(DataType::kInt32, simdKernels<Int32>());
  set(DataType::kUint32, simdKernels<Uint32>());
  set(DataType::kInt64, simdKernels<Int64>());
  set(DataType::kUint64, simdKernels<Uint64>());
  set(DataType::kFloat16, simdKernels<F16>());
  set(DataType::kFloat32, simdKernels<F32>());
  set(DataType::kFloat64, simdKernels<F64>());
  set(DataType::kBfloat16, simdKernels<Bf16>());
  return t;
}

}  // namespace
}  // namespace hoop::cpu_kernels
