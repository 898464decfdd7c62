// The one error model inside hoop: code + message, thrown as hoop::Error and turned into a
// hoopResult_t at the C boundary (c_api.cc).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "hoop/hoop.h"

namespace hoop {

class Error : public std::runtime_error {
 public:
  Error(hoopResult_t code, std::string message)
      : std::runtime_error(std::move(message)), code_(code) {}
  hoopResult_t code() const { return code_; }

 private:
  hoopResult_t code_;
};

// Concatenates anything streamable: str("rank ", r, " of ", n).
template <typename... Args>
std::string str(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

template <typename... Args>
[[noreturn]] void fail(hoopResult_t code, Args&&... args) {
  throw Error(code, str(std::forward<Args>(args)...));
}

// For a failed system call: appends strerror(errnum).
std::string errnoText(int errnum);

}  // namespace hoop
