// The C API's switch for the timeline (base/timeline.h): programs and the Python package start
// and stop it; HOOP_TIMELINE starts it as a communicator comes up.
#include "api/c_api_handle.h"
#include "base/timeline.h"

using namespace hoop;
using namespace hoop::capi;

HOOP_API hoopResult_t hoopTimelineStart(const char* path, int rank) {
  return guarded(nullptr, [&] {
    if (path == nullptr || *path == '\0') {
      fail(hoopInvalidArgument, "hoopTimelineStart: the path is NULL or empty");
    }
    if (rank < 0) fail(hoopInvalidArgument, "hoopTimelineStart: rank ", rank, " < 0");
    timelineStart(path, rank);
  });
}

HOOP_API hoopResult_t hoopTimelineStop(void) {
  return guarded(nullptr, [] { timelineStop(); });
}
