#include "device/cpu/cpu_isa.h"

#include <strings.h>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <cstdlib>

#include "base/logging.h"

namespace hoop {

const char* cpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kPortable: return "portable";
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kAvx512: return "avx512";
    case CpuIsa::kNeon: return "neon";
  }
  return "?";
}

bool cpuIsaIncludes(CpuIsa supported, CpuIsa wanted) {
  if (wanted == CpuIsa::kPortable) return true;
  switch (supported) {
    case CpuIsa::kPortable: return false;
    case CpuIsa::kAvx2: return wanted == CpuIsa::kAvx2;
    case CpuIsa::kAvx512: return wanted == CpuIsa::kAvx2 || wanted == CpuIsa::kAvx512;
    case CpuIsa::kNeon: return wanted == CpuIsa::kNeon;
  }
  return false;
}

std::optional<CpuIsa> parseCpuIsa(std::string_view name) {
  for (const CpuIsa isa : {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kNeon}) {
    const std::string_view candidate = cpuIsaName(isa);
    if (name.size() == candidate.size() &&
        strncasecmp(name.data(), candidate.data(), name.size()) == 0) {
      return isa;
    }
  }
  return std::nullopt;
}

namespace {

#if defined(__x86_64__)
// F16C straight from cpuid (leaf 1, ECX): Clang's __builtin_cpu_supports has no "f16c". Its
// registers are AVX's, whose OS support the "avx2" check below already covers.
bool cpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}
#endif

}  // namespace

CpuIsa detectCpuIsa() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  // __builtin_cpu_supports reports a feature only when the OS also saves its registers (XCR0),
  // so a kernel that hides AVX-512 state from guests is handled.
  if (!__builtin_cpu_supports("avx2") || !cpuHasF16c()) return CpuIsa::kPortable;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return CpuIsa::kAvx512;
  }
  return CpuIsa::kAvx2;
#elif defined(__aarch64__) && defined(__linux__)
  // Advanced SIMD and FP are part of every ARMv8-A Linux system, but the kernel's word is what
  // says they are enabled. FCVTL/FCVTN (the fp16 conversions the kernels use) are base ASIMD;
  // fp16 arithmetic (HWCAP_ASIMDHP) is not needed, as sums are taken in fp32.
  const unsigned long hwcap = getauxval(AT_HWCAP);
  if ((hwcap & HWCAP_ASIMD) != 0 && (hwcap & HWCAP_FP) != 0) return CpuIsa::kNeon;
  return CpuIsa::kPortable;
#else
  return CpuIsa::kPortable;
#endif
}

CpuIsaChoice chooseCpuIsa(CpuIsa supported, const char* request) {
  if (request == nullptr || request[0] == '\0') return {supported, {}};
  const std::optional<CpuIsa> wanted = parseCpuIsa(request);
  if (!wanted) {
    return {supported,
            str("HOOP_CPU_ISA=", request,
                " is not one of portable, avx2, avx512, neon; using the best this CPU has (",
                cpuIsaName(supported), ")")};
  }
  if (!cpuIsaIncludes(supported, *wanted)) {
    return {supported,
            str("HOOP_CPU_ISA=", request, " asks for instructions this CPU does not have; using ",
                cpuIsaName(supported))};
  }
  return {*wanted, {}};
}

CpuIsa activeCpuIsa() {
  // Chosen once (thread-safe static) so every collective in the process runs the same kernels,
  // and logged once.
  static const CpuIsa active = [] {
    const CpuIsa supported = detectCpuIsa();
    const CpuIsaChoice choice = chooseCpuIsa(supported, std::getenv("HOOP_CPU_ISA"));
    if (!choice.warning.empty()) log(LogLevel::kWarn, LogSubsys::kColl, -1, choice.warning);
    log(LogLevel::kInfo, LogSubsys::kColl, -1, "CPU reduction kernels: ", cpuIsaName(choice.isa),
        " (CPU supports ", cpuIsaName(supported), ")");
    return choice.isa;
  }();
  return active;
}

}  // namespace hoop
