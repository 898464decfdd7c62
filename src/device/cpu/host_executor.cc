#include "device/cpu/host_executor.h"

#include <cstring>

#include "device/cpu/reduce.h"

namespace hoop {

void HostExecutor::copy(void* dst, const void* src, size_t bytes) {
  // A count of 0 may come with null pointers, and mem* on null is undefined even for 0 bytes.
  if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
}

void HostExecutor::reduce(void* out, const void* a, const void* b, size_t count, DataType type,
                          RedOp op) {
  hoop::reduce(out, a, b, count, type, op);
}

void HostExecutor::reduceFinal(void* out, const void* a, const void* b, size_t count, DataType type,
                               RedOp op, size_t divisor) {
  hoop::reduceFinal(out, a, b, count, type, op, divisor);
}

void HostExecutor::reduceCopy(void* out1, void* out2, const void* a, const void* b, size_t count,
                              DataType type, RedOp op) {
  hoop::reduceCopy(out1, out2, a, b, count, type, op);
}

void HostExecutor::reduceCopyFinal(void* out1, void* out2, const void* a, const void* b,
                                   size_t count, DataType type, RedOp op, size_t divisor) {
  hoop::reduceCopyFinal(out1, out2, a, b, count, type, op, divisor);
}

void HostExecutor::finishAverage(void* out, const void* in, size_t count, DataType type, RedOp op,
                                 size_t divisor) {
  hoop::finishAverage(out, in, count, type, op, divisor);
}

std::unique_ptr<Staging> HostExecutor::newStaging() const {
  return std::make_unique<HostStaging>();
}

char* HostStaging::reserve(size_t bytes) {
  if (buffer_.size() < bytes) buffer_.resize(bytes);
  return buffer_.data();
}

}  // namespace hoop
