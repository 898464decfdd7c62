// An mmap'd range as an RAII value: unmapped exactly once, by whoever owns it last.
#pragma once

#include <cstddef>
#include <utility>

namespace hoop {

class Mapping {
 public:
  Mapping() = default;
  Mapping(void* address, size_t bytes) : address_(address), bytes_(bytes) {}
  Mapping(Mapping&& other) noexcept
      : address_(std::exchange(other.address_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  Mapping& operator=(Mapping&& other) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { reset(); }

  void* get() const { return address_; }
  size_t size() const { return bytes_; }
  void reset();

 private:
  void* address_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace hoop
