// The premultiplied sum (hoopRedOpCreatePreMulSum): every rank's input multiplied by the op's
// factor, then the sum schedule hoopSum runs. The product goes into memory of the communicator's
// own (the caller's input stays as it was), and the schedule reads it from there: every schedule
// serves the op unchanged, and the result has the sum's properties (the same bits on every rank,
// exact where the products and their sums are).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "algorithms/collective.h"
#include "base/types.h"

namespace hoop {

class Communicator;

// The factor as a call carries it: a copy made when the op was created, or a pointer read when the
// call runs.
struct PreMulFactor {
  enum class Source : uint8_t {
    kValue,          // `value`
    kHostPointer,    // read by the CPU when the call runs
    kDevicePointer,  // read on the device in stream order (a host call copies it from there)
  };
  DataType type = DataType::kFloat32;
  Source source = Source::kValue;
  std::array<uint8_t, 8> value{};  // the element's bytes, for kValue
  const void* pointer = nullptr;   // for the pointer sources
};

// Elements of the call's input that the factor multiplies: a block per rank for reduce-scatter.
size_t premultipliedCount(const CollectiveArgs& args, int ranks);

// Runs `args` (a reduction with RedOp::kSum on host memory) on the premultiplied input.
void runPremultipliedCollective(Communicator& comm, CollectiveArgs args,
                                const PreMulFactor& factor);

}  // namespace hoop
