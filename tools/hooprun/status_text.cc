#include "hooprun/status_text.h"

#include <sys/wait.h>

#include <cstring>

namespace hoop::run {

bool exitedCleanly(int wait_status) {
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

std::string describeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  }
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    std::string text = "killed by signal " + std::to_string(sig);
    if (const char* what = ::strsignal(sig)) text += std::string(" (") + what + ")";
    return text;
  }
  return "ended with wait status " + std::to_string(wait_status);
}

int exitCodeFor(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

std::string signalName(int signal_number) {
  if (const char* abbrev = ::sigabbrev_np(signal_number)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(signal_number);
}

std::string formatRankList(const std::vector<size_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string countRanks(size_t count) {
  return std::to_string(count) + (count == 1 ? " rank" : " ranks");
}

}  // namespace hoop::run
