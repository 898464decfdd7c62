// How hooprun words what happened to ranks, and which exit code it turns into.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hoop::run {

// True when a waitpid(2) status is a normal exit with status 0.
bool exitedCleanly(int wait_status);

// "exited with status 3" or "killed by signal 11 (Segmentation fault)".
std::string describeWaitStatus(int wait_status);

// The shell convention: the exit status, or 128 + the signal number.
int exitCodeFor(int wait_status);

// "SIGTERM" for 15; "signal 64" when the number has no name.
std::string signalName(int signal_number);

// Sorted rank numbers as "0-2,5,7-8".
std::string formatRankList(const std::vector<size_t>& ranks);

// "1 rank", "3 ranks".
std::string countRanks(size_t count);

}  // namespace hoop::run
