// ncclConfig_t as hoop reads it: the header check, NCCL's rule that a field newer than the
// program's header takes its default, NCCL's ranges, and what becomes of each field in hoop.
#pragma once

#include <string>

#include "hoop/hoop.h"
#include "nccl.h"

namespace hoop::nccl {

struct CommSettings {
  hoopConfig_t hoop = HOOP_CONFIG_INITIALIZER;
  std::string name;  // config->commName, empty when unset
};

// The settings `config` asks for; NULL is every default. A header that NCCL_CONFIG_INITIALIZER did
// not write, or a field out of NCCL's range, fails with hoopInvalidArgument naming `call` and
// the field.
CommSettings readConfig(const ncclConfig_t* config, const char* call);

}  // namespace hoop::nccl
