#include "base/host_identity.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "base/hash.h"
#include "base/logging.h"

namespace hoop {

uint64_t localHostId() {
  std::string identity = localHostName();
  if (std::getenv("HOOP_HOSTNAME") == nullptr) {
    std::ifstream bootId("/proc/sys/kernel/random/boot_id");
    std::string line;
    std::getline(bootId, line);
    identity += "/" + line;
  }
  return fnv1a(identity);
}

}  // namespace hoop
