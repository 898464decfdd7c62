#include "device/cpu/scale.h"

#include <array>
#include <cstring>

#include "device/cpu/reduce.h"

namespace hoop {

void scale(void* out, const void* in, size_t count, DataType type, const void* factor) {
  // The factor repeated over a block, so the product runs on reduce()'s SIMD kernels block by
  // block instead of element by element.
  constexpr size_t kBlockBytes = 4096;
  alignas(64) std::array<unsigned char, kBlockBytes> factors;
  const size_t size = dataTypeSize(type);
  const size_t perBlock = kBlockBytes / size;
  for (size_t i = 0; i < perBlock; ++i) std::memcpy(factors.data() + i * size, factor, size);
  auto* to = static_cast<char*>(out);
  const auto* from = static_cast<const char*>(in);
  for (size_t done = 0; done < count; done += perBlock) {
    const size_t n = count - done < perBlock ? count - done : perBlock;
    reduce(to + done * size, from + done * size, factors.data(), n, type, RedOp::kProd);
  }
}

}  // namespace hoop
