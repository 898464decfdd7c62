// hoop-perf's view of the element types and reduction ops (the C API's enums; their names and
// sizes come from the project's one table, base/types.h), and the typed element access the fill
// and check code uses: small integers in, exact values out.
#pragma once

#include <hoop/hoop.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "base/types.h"

namespace hoop::perf {

// In the order `-d all` and `-o all` run them: the table's, which is nccl-tests' order.
inline constexpr auto kAllTypes = [] {
  std::array<hoopDataType_t, kDataTypes.size()> all{};
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<hoopDataType_t>(kDataTypes[i].type);
  return all;
}();
inline constexpr auto kAllOps = [] {
  std::array<hoopRedOp_t, kRedOps.size()> all{};
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<hoopRedOp_t>(kRedOps[i].op);
  return all;
}();

// The C API's values equal the core's, so these are casts.
inline size_t typeSize(hoopDataType_t type) { return dataTypeSize(static_cast<DataType>(type)); }
inline std::string_view typeName(hoopDataType_t type) {
  return dataTypeName(static_cast<DataType>(type));
}
inline std::string_view opName(hoopRedOp_t op) { return redOpName(static_cast<RedOp>(op)); }
inline std::optional<hoopDataType_t> parseTypeName(std::string_view name) {
  const std::optional<DataType> type = parseDataType(name);
  if (!type) return std::nullopt;
  return static_cast<hoopDataType_t>(*type);
}
inline std::optional<hoopRedOp_t> parseOpName(std::string_view name) {
  const std::optional<RedOp> op = parseRedOp(name);
  if (!op) return std::nullopt;
  return static_cast<hoopRedOp_t>(*op);
}

// IEEE binary16 and bfloat16 from float with round to nearest even (overflow gives infinity), and
// back. Every integer up to 2048 (half) or 256 (bfloat16) in magnitude converts exactly.
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBfloat16(float value);
float bfloat16ToFloat(uint16_t bits);

// Storage types for the two 16-bit floats, so templates can tell them from uint16_t.
struct Half {
  uint16_t bits;
};
struct Bfloat16 {
  uint16_t bits;
};

// Element conversions: fromInteger is exact for the values hoop-perf generates; toDouble is exact
// for every value except 64-bit integers above 2^53, which no check expects.
template <typename T>
T fromInteger(int64_t value) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{floatToHalf(static_cast<float>(value))};
  } else if constexpr (std::is_same_v<T, Bfloat16>) {
    return Bfloat16{floatToBfloat16(static_cast<float>(value))};
  } else {
    return static_cast<T>(value);
  }
}

template <typename T>
double toDouble(T value) {
  if constexpr (std::is_same_v<T, Half>) {
    return halfToFloat(value.bits);
  } else if constexpr (std::is_same_v<T, Bfloat16>) {
    return bfloat16ToFloat(value.bits);
  } else {
    return static_cast<double>(value);
  }
}

// Calls f(T{}) with the storage type of `type`, so a loop over a buffer is compiled per type.
template <typename F>
decltype(auto) visitType(hoopDataType_t type, F&& f) {
  switch (type) {
    case hoopInt8: return f(int8_t{});
    case hoopUint8: return f(uint8_t{});
    case hoopInt32: return f(int32_t{});
    case hoopUint32: return f(uint32_t{});
    case hoopInt64: return f(int64_t{});
    case hoopUint64: return f(uint64_t{});
    case hoopHalf: return f(Half{});
    case hoopFloat: return f(float{});
    case hoopDouble: return f(double{});
    case hoopBfloat16:
    default: return f(Bfloat16{});
  }
}

}  // namespace hoop::perf
