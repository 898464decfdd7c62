// The emulated runtime's stream-ordered kernels and flag operations: each checks its arguments
// when enqueued (as CUDA's launchers do) and runs on the stream's thread.
#include <cstring>

#include "base/error.h"
#include "device/cpu/reduce.h"
#include "device/cpu/scale.h"
#include "device/emulated/emulated_runtime.h"
#include "device/emulated/emulated_stream.h"
#include "device/emulated/flag_ops.h"

namespace hoop::emulated {
namespace {

void checkElements(const void* pointer, DataType type, const char* operation, const char* what) {
  if (static_cast<size_t>(type) >= kDataTypes.size()) {
    fail(hoopInvalidArgument, operation, ": unknown data type ", static_cast<int>(type));
  }
  const size_t size = kDataTypes[static_cast<size_t>(type)].size;
  if (reinterpret_cast<uintptr_t>(pointer) % size != 0) {
    fail(hoopInvalidArgument, operation, ": ", what, " ", pointer, " is not aligned to its ",
         kDataTypes[static_cast<size_t>(type)].name, " elements");
  }
}

}  // namespace

void EmulatedRuntime::copy(void* dst, const void* src, size_t bytes, DeviceStream stream) {
  EmulatedStream& target = EmulatedStream::from(stream);
  if (bytes == 0 || dst == src) return;
  target.enqueue([dst, src, bytes] { std::memmove(dst, src, bytes); });
}

void EmulatedRuntime::reduceCopyFinal(void* out1, void* out2, const void* a, const void* b,
                                      size_t count, DataType type, RedOp op, size_t divisor,
                                      DeviceStream stream) {
  EmulatedStream& target = EmulatedStream::from(stream);
  checkElements(out1, type, "reduceCopyFinal", "out1");
  checkElements(out2, type, "reduceCopyFinal", "out2");
  checkElements(a, type, "reduceCopyFinal", "a");
  checkElements(b, type, "reduceCopyFinal", "b");
  target.enqueue([=] { hoop::reduceCopyFinal(out1, out2, a, b, count, type, op, divisor); });
}

void EmulatedRuntime::finishAverage(void* out, const void* in, size_t count, DataType type,
                                    RedOp op, size_t divisor, DeviceStream stream) {
  EmulatedStream& target = EmulatedStream::from(stream);
  checkElements(out, type, "finishAverage", "out");
  checkElements(in, type, "finishAverage", "in");
  target.enqueue([=] { hoop::finishAverage(out, in, count, type, op, divisor); });
}

void EmulatedRuntime::scale(void* out, const void* in, size_t count, DataType type,
                            const ScaleFactor& factor, DeviceStream stream) {
  EmulatedStream& target = EmulatedStream::from(stream);
  checkElements(out, type, "scale", "out");
  checkElements(in, type, "scale", "in");
  if (count == 0) return;
  // A factor in device memory is read when the stream gets here, as a kernel would.
  target.enqueue([=] {
    hoop::scale(out, in, count, type,
                factor.onDevice != nullptr ? factor.onDevice : factor.value.data());
  });
}

void EmulatedRuntime::writeFlag(uint32_t* flag, uint32_t value, DeviceStream stream) {
  EmulatedStream& target = EmulatedStream::from(stream);
  checkFlag(flag, "writeFlag");
  target.enqueue([flag, value] { storeFlag(flag, value); });
}

void EmulatedRuntime::waitFlag(const uint32_t* flag, uint32_t mask, DeviceStream stream) {
  EmulatedStream& target = EmulatedStream::from(stream);
  checkFlag(flag, "waitFlag");
  // (*flag & 0) != 0 never holds: the stream would hang for good.
  if (mask == 0) fail(hoopInvalidArgument, "waitFlag: mask 0 can never be satisfied");
  target.enqueue([flag, mask] { waitFlagSet(flag, mask); });
}

void EmulatedRuntime::addToCounter(uint32_t* counter, DeviceStream stream) {
  EmulatedStream& target = EmulatedStream::from(stream);
  checkFlag(counter, "addToCounter");
  target.enqueue([counter] { incrementCounter(counter); });
}

}  // namespace hoop::emulated
