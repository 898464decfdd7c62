// The hoop calls hoop-perf makes: one collective as a CallSpec describes it, the timed batch, and
// the small collectives that combine each rank's numbers. Every failure exits (hoop_call.h).
#pragma once

#include <hoop/hoop.h>

#include <cstdint>
#include <vector>

#include "buffers.h"
#include "options.h"

namespace hoop::perf {

// One call: blocking on host memory (stream null); enqueued on `stream` on device memory, done
// once the stream is synchronized.
void runCall(hoopComm_t comm, const CallSpec& call, const BufferPair& buffers,
             hoopStream_t stream = nullptr);

struct Timing {
  // The whole batch's time divided by its iterations: the table's time column (nccl-tests).
  double usPerIteration = 0.0;
  // Each iteration on its own, in order: the latency statistics of the JSON and CSV outputs. On
  // device memory every entry is the batch's average: calls enqueued back to back on a stream
  // end when the stream reaches them, which the host cannot see one by one.
  std::vector<double> iterationUs;
};

// The collective hoop's schedule queries (hoopCommScheduleName, hoopCommScheduleSettled) take
// for `collective`; false for sendrecv, a group that has no schedule.
bool scheduledCollective(Collective collective, hoopCollective_t* asked);

// warmupIters untimed calls, then more until hoop has settled its schedule for the call (it
// times the schedules it cannot tell apart on the first calls of a size: hoopCommScheduleSettled),
// a barrier so every rank starts the batch together, then iters timed calls, and more (the same
// number on every rank, from the slowest rank's time of the first iters) until the batch has
// taken minSeconds. So the batch measures the schedule a long job runs. Local to this rank:
// combine with combineAcrossRanks.
// With a stream (device memory), nccl-tests' way: the warm-up calls enqueued and waited for, then
// each batch timed on the host clock from its first enqueued call to the synchronize after its
// last. The device team chooses by its cost model alone and never times schedules, so there is
// nothing to settle (hoopCommScheduleSettled speaks of the host calls).
Timing timeCalls(hoopComm_t comm, const CallSpec& call, const BufferPair& buffers, int warmupIters,
                 int iters, double minSeconds = 0, hoopStream_t stream = nullptr);

// Every rank's value combined as -a asks (rank 0's, mean, min or max); the same on every rank.
double combineAcrossRanks(hoopComm_t comm, double value, AverageMode mode);

// combineAcrossRanks element by element in one call: values[i] of every rank combined into
// result[i]. Every rank passes the same number of values.
std::vector<double> combineEachAcrossRanks(hoopComm_t comm, const std::vector<double>& values,
                                           AverageMode mode);

// The sum of every rank's value; the same on every rank.
uint64_t sumAcrossRanks(hoopComm_t comm, uint64_t value);

}  // namespace hoop::perf
