// Little-endian encoding for everything hoop puts on a socket. The reader checks every length
// before use and reports a short or malformed message as an exception, never a wild read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"

namespace hoop {

class WireWriter {
 public:
  void u8(uint8_t value) { bytes_.push_back(value); }
  void u16(uint16_t value) { little(value, 2); }
  void u32(uint32_t value) { little(value, 4); }
  void u64(uint64_t value) { little(value, 8); }
  void raw(const void* data, size_t size) {
    const auto* begin = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), begin, begin + size);
  }
  // Fixed-width field, zero padded; longer text is cut (names are informational only).
  void fixedString(const std::string& text, size_t width) {
    size_t used = std::min(text.size(), width);
    raw(text.data(), used);
    bytes_.insert(bytes_.end(), width - used, 0);
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  void little(uint64_t value, int width) {
    for (int i = 0; i < width; ++i) bytes_.push_back(static_cast<uint8_t>(value >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
};

class WireReader {
 public:
  WireReader(const void* data, size_t size, const char* what)
      : data_(static_cast<const uint8_t*>(data)), size_(size), what_(what) {}

  uint8_t u8() { return static_cast<uint8_t>(little(1)); }
  uint16_t u16() { return static_cast<uint16_t>(little(2)); }
  uint32_t u32() { return static_cast<uint32_t>(little(4)); }
  uint64_t u64() { return little(8); }
  void raw(void* out, size_t size) {
    need(size);
    std::memcpy(out, data_ + offset_, size);
    offset_ += size;
  }
  std::string fixedString(size_t width) {
    need(width);
    const char* begin = reinterpret_cast<const char*>(data_ + offset_);
    offset_ += width;
    return std::string(begin, strnlen(begin, width));
  }
  size_t remaining() const { return size_ - offset_; }

 private:
  void need(size_t size) const {
    if (size > size_ - offset_) {
      fail(hoopRemoteError, "malformed ", what_, ": needs ", offset_ + size, " bytes, has ", size_);
    }
  }
  uint64_t little(int width) {
    need(static_cast<size_t>(width));
    uint64_t value = 0;
    for (int i = 0; i < width; ++i) value |= static_cast<uint64_t>(data_[offset_ + i]) << (8 * i);
    offset_ += static_cast<size_t>(width);
    return value;
  }

  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
  const char* what_;
};

}  // namespace hoop
