// The PMIx standard's ABI for what hoop passes to libpmix: a process's name, and a value of
// which hoop reads and writes only strings, with the constants it uses. Declared here rather
// than taken from pmix.h so that hoop builds where PMIx is not installed; a test compares
// them with pmix.h where it is (tests/launch/pmix_abi_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hoop::pmix_abi {

constexpr size_t kNamespaceBytes = 256;  // PMIX_MAX_NSLEN + 1
constexpr size_t kMaxKeyLength = 511;    // PMIX_MAX_KEYLEN
constexpr int kSuccess = 0;              // PMIX_SUCCESS
constexpr uint16_t kStringType = 3;      // PMIX_STRING
constexpr uint8_t kGlobalScope = 3;      // PMIX_GLOBAL: processes on every host

// pmix_proc_t
struct Proc {
  char nspace[kNamespaceBytes];
  uint32_t rank;
};

// pmix_value_t. The union is as large as the standard's (its largest member is an environment
// variable record of two pointers and a separator), so a value hoop builds is as long as any
// the library expects to read.
struct Value {
  uint16_t type;
  union {
    char* string;
    uint64_t words[3];
  } data;
};
static_assert(sizeof(void*) != 8 || sizeof(Value) == 32, "pmix_value_t: 32 bytes on LP64");

}  // namespace hoop::pmix_abi
