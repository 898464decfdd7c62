// UsageError: the command line or a hostfile is wrong; hooprun prints the message and exits 2.
#pragma once

#include <stdexcept>

namespace hoop::run {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hoop::run
