#include "runner.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "device_memory.h"
#include "hoop_call.h"
#include "timed_iterations.h"

namespace hoop::perf {

void runCall(hoopComm_t comm, const CallSpec& call, const BufferPair& buffers,
             hoopStream_t stream) {
  const CallBuffers at = callBuffers(call, buffers);
  switch (call.collective) {
    case Collective::kAllReduce:
      checkHoop(hoopAllReduce(at.send, at.recv, call.count, call.type, call.op, comm, stream),
                "hoopAllReduce", comm);
      return;
    case Collective::kAllGather:
      checkHoop(hoopAllGather(at.send, at.recv, call.count, call.type, comm, stream),
                "hoopAllGather", comm);
      return;
    case Collective::kBroadcast:
      checkHoop(hoopBroadcast(at.send, at.recv, call.count, call.type, call.root, comm, stream),
                "hoopBroadcast", comm);
      return;
    case Collective::kReduce:
      checkHoop(
          hoopReduce(at.send, at.recv, call.count, call.type, call.op, call.root, comm, stream),
          "hoopReduce", comm);
      return;
    case Collective::kReduceScatter:
      checkHoop(hoopReduceScatter(at.send, at.recv, call.count, call.type, call.op, comm, stream),
                "hoopReduceScatter", comm);
      return;
    case Collective::kAllToAll:
      checkHoop(hoopAllToAll(at.send, at.recv, call.count, call.type, comm, stream), "hoopAllToAll",
                comm);
      return;
    case Collective::kSendRecv: {
      // A ring shift: both calls in one group, so the blocking send and receive progress together.
      const int to = (call.rank + 1) % call.nranks;
      const int from = (call.rank - 1 + call.nranks) % call.nranks;
      checkHoop(hoopGroupStart(), "hoopGroupStart", comm);
      checkHoop(hoopSend(at.send, call.count, call.type, to, comm, stream), "hoopSend", comm);
      checkHoop(hoopRecv(at.recv, call.count, call.type, from, comm, stream), "hoopRecv", comm);
      checkHoop(hoopGroupEnd(), "hoopGroupEnd", comm);
      return;
    }
  }
}

bool scheduledCollective(Collective collective, hoopCollective_t* asked) {
  switch (collective) {
    case Collective::kAllReduce: *asked = hoopCollAllReduce; return true;
    case Collective::kAllGather: *asked = hoopCollAllGather; return true;
    case Collective::kBroadcast: *asked = hoopCollBroadcast; return true;
    case Collective::kReduce: *asked = hoopCollReduce; return true;
    case Collective::kReduceScatter: *asked = hoopCollReduceScatter; return true;
    case Collective::kAllToAll: *asked = hoopCollAllToAll; return true;
    case Collective::kSendRecv: return false;
  }
  return false;
}

namespace {

// Calls until hoop's schedule for `call` is settled, which hoop.h promises within
// HOOP_MOST_CALLS_TO_SETTLE calls of one size. A class still unsettled after them is that promise
// broken: reported, not timed as if it were the steady state.
void runUntilSettled(hoopComm_t comm, const CallSpec& call, const BufferPair& buffers) {
  hoopCollective_t asked{};
  if (!scheduledCollective(call.collective, &asked)) return;
  for (size_t calls = 0;; ++calls) {
    int settled = 0;
    checkHoop(hoopCommScheduleSettled(comm, asked, call.count, call.type, &settled),
              "hoopCommScheduleSettled", comm);
    if (settled != 0) return;
    if (calls == HOOP_MOST_CALLS_TO_SETTLE) {
      std::fprintf(stderr,
                   "hoop-perf: hoop's schedule for %zu elements is not settled after %zu calls "
                   "(HOOP_MOST_CALLS_TO_SETTLE)\n",
                   call.count, calls);
      std::exit(kExitHoopError);
    }
    runCall(comm, call, buffers);
  }
}

}  // namespace

Timing timeCalls(hoopComm_t comm, const CallSpec& call, const BufferPair& buffers, int warmupIters,
                 int iters, double minSeconds, hoopStream_t stream) {
  using Clock = std::chrono::steady_clock;
  auto microseconds = [](Clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
  };
  const bool onDevice = stream != nullptr;
  for (int i = 0; i < warmupIters; ++i) runCall(comm, call, buffers, stream);
  if (onDevice) {
    synchronizeStream(stream);
  } else {
    runUntilSettled(comm, call, buffers);
  }
  checkHoop(hoopBarrier(comm, nullptr), "hoopBarrier", comm);

  Timing timing;
  double batchUs = 0;
  auto timeHostBatch = [&](size_t calls) {
    const Clock::time_point start = Clock::now();
    Clock::time_point last = start;
    for (size_t i = 0; i < calls; ++i) {
      runCall(comm, call, buffers);
      const Clock::time_point now = Clock::now();
      timing.iterationUs.push_back(microseconds(now - last));
      last = now;
    }
    batchUs += microseconds(last - start);
  };
  auto timeDeviceBatch = [&](size_t calls) {
    const Clock::time_point start = Clock::now();
    for (size_t i = 0; i < calls; ++i) runCall(comm, call, buffers, stream);
    synchronizeStream(stream);
    const double us = microseconds(Clock::now() - start);
    timing.iterationUs.insert(timing.iterationUs.end(), calls, us / static_cast<double>(calls));
    batchUs += us;
  };
  auto timeBatch = [&](size_t calls) {
    if (calls == 0) return;
    if (onDevice) {
      timeDeviceBatch(calls);
    } else {
      timeHostBatch(calls);
    }
  };
  timing.iterationUs.reserve(static_cast<size_t>(iters));
  timeBatch(static_cast<size_t>(iters));
  if (minSeconds > 0) {
    // Every rank runs the same number of calls: all take the slowest rank's first batch.
    const double slowestUs = combineAcrossRanks(comm, batchUs, AverageMode::kMax);
    const size_t total = iterationsToFill(static_cast<size_t>(iters), minSeconds, slowestUs);
    if (total > timing.iterationUs.size()) {
      timing.iterationUs.reserve(total);
      timeBatch(total - timing.iterationUs.size());
    }
  }
  timing.usPerIteration = batchUs / static_cast<double>(timing.iterationUs.size());
  return timing;
}

double combineAcrossRanks(hoopComm_t comm, double value, AverageMode mode) {
  return combineEachAcrossRanks(comm, {value}, mode)[0];
}

std::vector<double> combineEachAcrossRanks(hoopComm_t comm, const std::vector<double>& values,
                                           AverageMode mode) {
  std::vector<double> result(values.size());
  if (mode == AverageMode::kRank0) {
    checkHoop(
        hoopBroadcast(values.data(), result.data(), values.size(), hoopDouble, 0, comm, nullptr),
        "hoopBroadcast", comm);
    return result;
  }
  const hoopRedOp_t op = mode == AverageMode::kMin   ? hoopMin
                         : mode == AverageMode::kMax ? hoopMax
                                                     : hoopSum;
  checkHoop(
      hoopAllReduce(values.data(), result.data(), values.size(), hoopDouble, op, comm, nullptr),
      "hoopAllReduce", comm);
  if (mode == AverageMode::kMean) {
    int nranks = 1;
    checkHoop(hoopCommCount(comm, &nranks), "hoopCommCount", comm);
    for (double& value : result) value /= nranks;
  }
  return result;
}

uint64_t sumAcrossRanks(hoopComm_t comm, uint64_t value) {
  uint64_t result = 0;
  checkHoop(hoopAllReduce(&value, &result, 1, hoopUint64, hoopSum, comm, nullptr), "hoopAllReduce",
            comm);
  return result;
}

}  // namespace hoop::perf
