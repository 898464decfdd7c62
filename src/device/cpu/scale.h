// The premultiplied sum's first step on host memory: every element of a rank's input multiplied by
// one factor of the same type before the sum (hoopRedOpCreatePreMulSum).
//
// The product is reduce.h's kProd with the factor as the second input, element for element, so
// it follows reduce.h's contract: integers wrap, fp16/bf16 multiply in fp32 and round once, and a
// NaN input keeps its bits (made quiet). The CUDA and emulated runtimes' scale gives the same bits.
#pragma once

#include <cstddef>

#include "base/types.h"

namespace hoop {

// out[i] = in[i] * factor for i < count; `factor` points to one element of `type` in host memory.
// out may alias in exactly.
void scale(void* out, const void* in, size_t count, DataType type, const void* factor);

}  // namespace hoop
