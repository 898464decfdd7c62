#include "base/error.h"

#include <cstring>

namespace hoop {

std::string errnoText(int errnum) {
  char buffer[128];
  // GNU strerror_r may return a static string instead of filling the buffer.
  const char* text = strerror_r(errnum, buffer, sizeof(buffer));
  return str(text, " (errno ", errnum, ")");
}

}  // namespace hoop
