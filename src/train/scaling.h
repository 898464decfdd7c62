// Multiplying a buffer by a scale factor while copying it (Horovod's prescale and postscale).
#pragma once

#include <cstddef>

#include "hoop/hoop.h"

namespace hoop::train {

// dst[i] = src[i] * factor for floating-point types (fp16/bf16 through fp32, rounded once); a
// plain copy when factor is 1. dst may equal src; otherwise they must not overlap. Integer types
// accept only factor 1 (the engine checks that at submission).
void scaledCopy(void* dst, const void* src, size_t count, hoopDataType_t type, double factor);

}  // namespace hoop::train
