#include "device/device_executor.h"

#include <algorithm>
#include <cstdint>

#include "base/error.h"

namespace hoop {

void DeviceExecutor::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  flushDeferred();
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
  const auto toAt = reinterpret_cast<uintptr_t>(to);
  const auto fromAt = reinterpret_cast<uintptr_t>(from);
  const size_t distance = toAt > fromAt ? toAt - fromAt : fromAt - toAt;
  if (distance >= bytes) {
    runtime_.copy(to, from, bytes, stream_);
    return;
  }
  // Forwards when the destination lies below the source, backwards when above: each piece's
  // source is read before a later piece overwrites it (the stream runs them in order).
  if (toAt < fromAt) {
    for (size_t at = 0; at < bytes; at += distance) {
      runtime_.copy(to + at, from + at, std::min(distance, bytes - at), stream_);
    }
  } else {
    for (size_t end = bytes; end > 0;) {
      const size_t piece = std::min(distance, end);
      end -= piece;
      runtime_.copy(to + end, from + end, piece, stream_);
    }
  }
}

void DeviceExecutor::reduce(void* out, const void* a, const void* b, size_t count, DataType type,
                            RedOp op) {
  flushDeferred();
  runtime_.reduceCopyFinal(out, nullptr, a, b, count, type, op, 0, stream_);
}

void DeviceExecutor::reduceFinal(void* out, const void* a, const void* b, size_t count,
                                 DataType type, RedOp op, size_t divisor) {
  flushDeferred();
  runtime_.reduceCopyFinal(out, nullptr, a, b, count, type, op, divisor, stream_);
}

void DeviceExecutor::reduceCopy(void* out1, void* out2, const void* a, const void* b, size_t count,
                                DataType type, RedOp op) {
  flushDeferred();
  runtime_.reduceCopyFinal(out1, out2, a, b, count, type, op, 0, stream_);
}

void DeviceExecutor::reduceCopyFinal(void* out1, void* out2, const void* a, const void* b,
                                     size_t count, DataType type, RedOp op, size_t divisor) {
  flushDeferred();
  runtime_.reduceCopyFinal(out1, out2, a, b, count, type, op, divisor, stream_);
}

void DeviceExecutor::finishAverage(void* out, const void* in, size_t count, DataType type, RedOp op,
                                   size_t divisor) {
  flushDeferred();
  runtime_.finishAverage(out, in, count, type, op, divisor, stream_);
}

std::unique_ptr<Staging> DeviceExecutor::newStaging() const {
  return std::make_unique<DeviceStaging>(runtime_);
}

DeviceStaging::~DeviceStaging() {
  runtime_.release(current_);
  for (char* old : outgrown_) runtime_.release(old);
}

char* DeviceStaging::reserve(size_t bytes) {
  if (bytes <= bytes_) return current_;
  // Twice the size asked for at the least, so a sweep of growing calls allocates log-many times.
  const size_t grown = std::max(bytes, bytes_ * 2);
  char* fresh = static_cast<char*>(runtime_.allocate(grown));
  if (current_ != nullptr) outgrown_.push_back(current_);
  current_ = fresh;
  bytes_ = grown;
  return current_;
}

}  // namespace hoop
