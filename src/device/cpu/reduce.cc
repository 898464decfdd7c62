// The reduce.h entry points: the one place a kernel table is chosen (activeCpuIsa(), once per
// process), and the handling of count 0, divisor 1 and finishAverage's copy, shared by every
// level.
#include "device/cpu/reduce.h"

#include <cassert>
#include <cstring>

#include "device/cpu/kernel_table.h"

namespace hoop {
namespace {

using cpu_kernels::BinaryKernel;
using cpu_kernels::KernelSet;
using cpu_kernels::KernelTable;
using cpu_kernels::UnaryKernel;

// A level's table with its gaps filled from the portable one, so a lookup is one load.
KernelTable completeTable(const KernelTable& simd) {
  const KernelTable& portable = cpu_kernels::portableTable();
  KernelTable t = simd;
  for (size_t i = 0; i < t.size(); ++i) {
    KernelSet& k = t[i];
    const KernelSet& p = portable[i];
    if (!k.sum) k.sum = p.sum;
    if (!k.prod) k.prod = p.prod;
    if (!k.max) k.max = p.max;
    if (!k.min) k.min = p.min;
    if (!k.sumThenDivide) k.sumThenDivide = p.sumThenDivide;
    if (!k.divide) k.divide = p.divide;
  }
  return t;
}

const KernelTable& tableFor(CpuIsa isa) {
  // Each table is built on first use: avx2Table()/avx512Table()/neonTable() are only reached on
  // a CPU that has the instructions (not that reading their constant tables would execute any).
  switch (isa) {
    case CpuIsa::kNeon: {
      static const KernelTable neon = completeTable(cpu_kernels::neonTable());
      return neon;
    }
    case CpuIsa::kAvx512: {
      static const KernelTable avx512 = completeTable(cpu_kernels::avx512Table());
      return avx512;
    }
    case CpuIsa::kAvx2: {
      static const KernelTable avx2 = completeTable(cpu_kernels::avx2Table());
      return avx2;
    }
    case CpuIsa::kPortable: break;
  }
  return cpu_kernels::portableTable();
}

const KernelSet& kernelsFor(CpuIsa isa, DataType type) {
  const auto index = static_cast<size_t>(type);
  assert(index < kNumDataTypes);
  return tableFor(isa)[index];
}

const KernelSet& activeKernelsFor(DataType type) {
  static const CpuIsa isa = activeCpuIsa();
  return kernelsFor(isa, type);
}

BinaryKernel binaryFor(const KernelSet& k, RedOp op, bool divide) {
  switch (op) {
    case RedOp::kSum: return k.sum;
    case RedOp::kProd: return k.prod;
    case RedOp::kMax: return k.max;
    case RedOp::kMin: return k.min;
    case RedOp::kAvg: return divide ? k.sumThenDivide : k.sum;
  }
  assert(false && "invalid RedOp");
  return k.sum;
}

void run(const KernelSet& k, void* out1, void* out2, const void* a, const void* b, size_t count,
         RedOp op, size_t divisor) {
  if (count == 0) return;
  // Dividing by 1 is the identity (x / 1 == x exactly; only a signaling NaN's quiet bit could
  // differ), so divisor 1 (and 0, see reduce.h) take the plain sum.
  const bool divide = op == RedOp::kAvg && divisor > 1;
  binaryFor(k, op, divide)(out1, out2, a, b, count, divisor);
}

void runFinishAverage(const KernelSet& k, void* out, const void* in, size_t count, DataType type,
                      RedOp op, size_t divisor) {
  if (count == 0) return;
  if (op == RedOp::kAvg && divisor > 1) {
    k.divide(out, in, count, divisor);
  } else if (out != in) {
    std::memcpy(out, in, count * dataTypeSize(type));
  }
}

}  // namespace

void reduce(void* out, const void* a, const void* b, size_t count, DataType type, RedOp op) {
  run(activeKernelsFor(type), out, nullptr, a, b, count, op, 1);
}

void reduceFinal(void* out, const void* a, const void* b, size_t count, DataType type, RedOp op,
                 size_t divisor) {
  run(activeKernelsFor(type), out, nullptr, a, b, count, op, divisor);
}

void reduceCopy(void* out1, void* out2, const void* a, const void* b, size_t count, DataType type,
                RedOp op) {
  run(activeKernelsFor(type), out1, out2, a, b, count, op, 1);
}

void reduceCopyFinal(void* out1, void* out2, const void* a, const void* b, size_t count,
                     DataType type, RedOp op, size_t divisor) {
  run(activeKernelsFor(type), out1, out2, a, b, count, op, divisor);
}

void finishAverage(void* out, const void* in, size_t count, DataType type, RedOp op,
                   size_t divisor) {
  runFinishAverage(activeKernelsFor(type), out, in, count, type, op, divisor);
}

void reduceCopyFinalAt(CpuIsa isa, void* out1, void* out2, const void* a, const void* b,
                       size_t count, DataType type, RedOp op, size_t divisor) {
  run(kernelsFor(isa, type), out1, out2, a, b, count, op, divisor);
}

void finishAverageAt(CpuIsa isa, void* out, const void* in, size_t count, DataType type, RedOp op,
                     size_t divisor) {
  runFinishAverage(kernelsFor(isa, type), out, in, count, type, op, divisor);
}

}  // namespace hoop
