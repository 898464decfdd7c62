// The shape every reduction kernel shares, so reduce.cc can pick a table per CPU level and the
// portable, AVX2, AVX-512 and NEON files can each fill one without seeing the others.
#pragma once

#include <array>
#include <cstddef>

#include "base/types.h"

namespace hoop::cpu_kernels {

// out1[i] = a[i] op b[i] (divided by `divisor` for sumThenDivide), also written to out2[i] when
// out2 is not null, in one pass. Any pointer may alias another exactly (never partially): each
// element is read before it is written. divisor matters only to sumThenDivide, which is only
// called with divisor >= 2.
using BinaryKernel = void (*)(void* out1, void* out2, const void* a, const void* b, size_t count,
                              size_t divisor);
// out[i] = in[i] / divisor (finishAverage), divisor >= 2.
using UnaryKernel = void (*)(void* out, const void* in, size_t count, size_t divisor);

struct KernelSet {
  BinaryKernel sum = nullptr;
  BinaryKernel prod = nullptr;
  BinaryKernel max = nullptr;
  BinaryKernel min = nullptr;
  BinaryKernel sumThenDivide = nullptr;  // kAvg in reduceFinal / reduceCopyFinal
  UnaryKernel divide = nullptr;          // kAvg in finishAverage
};

// Indexed by DataType. The portable table is complete; a SIMD table leaves an entry null where
// it has nothing faster (64-bit integer division, say) and the portable kernel is used there.
using KernelTable = std::array<KernelSet, kNumDataTypes>;

const KernelTable& portableTable();
// Only call these after checking the CPU has the instructions (see cpu_isa.h): the code in them
// is compiled for AVX2+F16C, AVX-512 F/BW/VL/DQ, resp. aarch64 Advanced SIMD. Built for another
// architecture, each is an empty table.
const KernelTable& avx2Table();
const KernelTable& avx512Table();
const KernelTable& neonTable();

}  // namespace hoop::cpu_kernels
