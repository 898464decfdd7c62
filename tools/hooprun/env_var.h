// EnvVar: one NAME=value pair handed to a rank.
#pragma once

#include <string>

namespace hoop::run {

struct EnvVar {
  std::string name;
  std::string value;

  bool operator==(const EnvVar&) const = default;
};

}  // namespace hoop::run
