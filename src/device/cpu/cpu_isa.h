// Which instruction-set level the CPU reduction kernels run at: detected once (x86: cpuid;
// aarch64: the kernel's HWCAP bits), and lowered (never raised) by
// HOOP_CPU_ISA=portable|avx2|avx512|neon for tests and for debugging.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hoop {

// Levels of one architecture are ordered (an x86 level includes the x86 levels below it);
// portable is below every level; levels of different architectures are unrelated
// (cpuIsaIncludes says which a CPU can run).
enum class CpuIsa : int {
  kPortable = 0,  // plain C++, any x86-64 (or any other CPU)
  kAvx2 = 1,      // AVX2 + F16C
  kAvx512 = 2,    // AVX-512 F, BW, VL and DQ (Skylake-SP, Ice Lake, Zen 4 and later)
  kNeon = 3,      // aarch64 Advanced SIMD with its fp16 conversions (every ARMv8-A, Pi 4 on)
};

// Whether a CPU whose best level is `supported` can run the kernels of `wanted`.
bool cpuIsaIncludes(CpuIsa supported, CpuIsa wanted);

const char* cpuIsaName(CpuIsa isa);
std::optional<CpuIsa> parseCpuIsa(std::string_view name);  // case-insensitive

// The best level this CPU (and OS: cpuid's flags include the saved-register checks; HWCAP is
// what the kernel enabled) supports.
CpuIsa detectCpuIsa();

struct CpuIsaChoice {
  CpuIsa isa;
  std::string warning;  // empty unless the request could not be honoured
};
// The level to use given what the CPU supports and HOOP_CPU_ISA's value (nullptr when unset).
// A request `supported` does not include, or one that does not parse, gets `supported` and a
// warning.
CpuIsaChoice chooseCpuIsa(CpuIsa supported, const char* request);

// The level the reduce() entry points use: chosen on first use from detectCpuIsa() and
// HOOP_CPU_ISA, logged once (INFO, COLL; the warning at WARN), then fixed for the process.
CpuIsa activeCpuIsa();

}  // namespace hoop
