#include "train/scaling.h"

#include <cstdint>
#include <cstring>

#include "base/half.h"
#include "train/request_shape.h"

namespace hoop::train {
namespace {

template <typename T>
void scaleNative(void* dst, const void* src, size_t count, T factor) {
  auto* out = static_cast<T*>(dst);
  const auto* in = static_cast<const T*>(src);
  for (size_t i = 0; i < count; ++i) out[i] = in[i] * factor;
}

template <float (*toFloat)(uint16_t), uint16_t (*fromFloat)(float)>
void scaleSixteenBit(void* dst, const void* src, size_t count, float factor) {
  auto* out = static_cast<uint16_t*>(dst);
  const auto* in = static_cast<const uint16_t*>(src);
  for (size_t i = 0; i < count; ++i) out[i] = fromFloat(toFloat(in[i]) * factor);
}

}  // namespace

void scaledCopy(void* dst, const void* src, size_t count, hoopDataType_t type, double factor) {
  if (factor == 1.0 || !isFloatingPoint(type)) {
    if (dst != src && count > 0) std::memcpy(dst, src, count * elementSize(type));
    return;
  }
  switch (type) {
    case hoopFloat32: scaleNative<float>(dst, src, count, static_cast<float>(factor)); break;
    case hoopFloat64: scaleNative<double>(dst, src, count, factor); break;
    case hoopFloat16:
      scaleSixteenBit<halfToFloat, floatToHalf>(dst, src, count, static_cast<float>(factor));
      break;
    case hoopBfloat16:
      scaleSixteenBit<bf16ToFloat, floatToBf16>(dst, src, count, static_cast<float>(factor));
      break;
    default: break;
  }
}

}  // namespace hoop::train
