#include "topology/sysfs_list.h"

#include <exception>

namespace hoop {

size_t entriesInSysfsList(const std::string& list) {
  size_t count = 0;
  size_t at = 0;
  while (at < list.size()) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    const std::string range = list.substr(at, end - at);
    const size_t dash = range.find('-');
    try {
      if (dash == std::string::npos) {
        (void)std::stoul(range);
        count += 1;
      } else {
        const unsigned long first = std::stoul(range.substr(0, dash));
        const unsigned long last = std::stoul(range.substr(dash + 1));
        if (last < first) return 0;
        count += last - first + 1;
      }
    } catch (const std::exception&) {
      return 0;
    }
    at = end + 1;
  }
  return count;
}

}  // namespace hoop
