// How hoop-perf reacts to a failed hoop call: one line naming the call and hoop's explanation,
// then exit status 1. Every rank reports its own failure; hoop turns a dead peer into an error on
// the others (never a hang), so they follow with their own line.
#pragma once

#include <hoop/hoop.h>

namespace hoop::perf {

inline constexpr int kExitHoopError = 1;

// Returns when result is hoopSuccess; otherwise prints
// "hoop-perf: <call> failed: <hoopGetErrorString> : <hoopGetLastError(comm)>" and exits.
// comm may be null (before a communicator exists): hoop then reports this thread's last error.
void checkHoop(hoopResult_t result, const char* call, hoopComm_t comm);

}  // namespace hoop::perf
