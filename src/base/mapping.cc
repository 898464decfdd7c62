#include "base/mapping.h"

#include <sys/mman.h>

namespace hoop {

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    reset();
    address_ = std::exchange(other.address_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void Mapping::reset() {
  if (address_ != nullptr) munmap(address_, bytes_);
  address_ = nullptr;
  bytes_ = 0;
}

}  // namespace hoop
