// Which instruction-set level the CPU reduction kernels run at: detected once from cpuid, and
// lowered (never raised) by HOOP_CPU_ISA=portable|avx2|avx512 for tests and for debugging.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hoop {

// Ordered: a level includes everything below it.
enum class CpuIsa : int {
  kPortable = 0,  // plain C++, any x86-64 (or any other CPU)
  kAvx2 = 1,      // AVX2 + F16C
  kAvx512 = 2,    // AVX-512 F, BW, VL and DQ (Skylake-SP, Ice Lake, Zen 4 and later)
};

const char* cpuIsaName(CpuIsa isa);
std::optional<CpuIsa> parseCpuIsa(std::string_view name);  // case-insensitive

// The best level this CPU (and OS: cpuid's flags include the saved-register checks) supports.
CpuIsa detectCpuIsa();

struct CpuIsaChoice {
  CpuIsa isa;
  std::string warning;  // empty unless the request could not be honoured
};
// The level to use given what the CPU supports and HOOP_CPU_ISA's value (nullptr when unset).
// A request above `supported` or one that does not parse gets `supported` and a warning.
CpuIsaChoice chooseCpuIsa(CpuIsa supported, const char* request);

// The level the reduce() entry points use: chosen on first use from detectCpuIsa() and
// HOOP_CPU_ISA, logged once (INFO, COLL; the warning at WARN), then fixed for the process.
CpuIsa activeCpuIsa();

}  // namespace hoop
