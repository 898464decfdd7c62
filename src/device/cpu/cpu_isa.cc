#include "device/cpu/cpu_isa.h"

#include <strings.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdlib>

#include "base/logging.h"

namespace hoop {

const char* cpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kPortable: return "portable";
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kAvx512: return "avx512";
  }
  return "?";
}

std::optional<CpuIsa> parseCpuIsa(std::string_view name) {
  for (const CpuIsa isa : {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
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
#endif
  return CpuIsa::kPortable;
}

CpuIsaChoice chooseCpuIsa(CpuIsa supported, const char* request) {
  if (request == nullptr || request[0] == '\0') return {supported, {}};
  const std::optional<CpuIsa> wanted = parseCpuIsa(request);
  if (!wanted) {
    return {supported, str("HOOP_CPU_ISA=", request,
                           " is not one of portable, avx2, avx512; using the best this CPU has (",
                           cpuIsaName(supported), ")")};
  }
  if (static_cast<int>(*wanted) > static_cast<int>(supported)) {
    return {supported, str("HOOP_CPU_ISA=", request,
                           " asks for more than this CPU supports; using ", cpuIsaName(supported))};
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
