// The C API's hold on schedules: which one a call would run, whether hoop is still timing its
// size, and rules that force schedules on a live communicator.
#include <string>

#include "algorithms/algo_overrides.h"
#include "algorithms/collective.h"
#include "algorithms/registry.h"
#include "api/c_api_arguments.h"
#include "api/c_api_submit.h"

using namespace hoop;
using namespace hoop::capi;

namespace {

// The call hoopCommScheduleName and hoopCommScheduleSettled ask about, checked.
CollectiveArgs askedCall(hoopComm_t comm, hoopCollective_t collective, size_t count,
                         hoopDataType_t datatype, const void* answer, const char* answerName,
                         const char* function) {
  // A question, not an operation: a finalized communicator answers it too.
  checkedComm(comm, function);
  checkInitialised(comm, function);
  checkType(datatype, function);
  if (answer == nullptr) fail(hoopInvalidArgument, function, ": ", answerName, " is NULL");
  const auto kind = static_cast<OpKind>(collective);
  switch (kind) {
    case OpKind::kAllReduce:
    case OpKind::kBroadcast:
    case OpKind::kReduce:
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAllToAll: break;
    default:
      fail(hoopInvalidArgument, function, ": ", static_cast<int>(collective),
           " is not a hoopCollective_t");
  }
  CollectiveArgs args;
  args.kind = kind;
  args.count = count;
  args.type = static_cast<DataType>(datatype);
  return args;
}

}  // namespace

HOOP_API hoopResult_t hoopCommScheduleName(hoopComm_t comm, hoopCollective_t collective,
                                           size_t count, hoopDataType_t datatype,
                                           const char** name) {
  return guarded(nullptr, [&] {
    const CollectiveArgs args =
        askedCall(comm, collective, count, datatype, name, "name", "hoopCommScheduleName");
    // A call in flight (non-blocking communicators) may be settling the choice.
    std::lock_guard lock(comm->impl->operationMutex());
    // Literals in the registry: a static C string.
    *name = chooseSchedule(*comm->impl, args).schedule->name().data();
  });
}

HOOP_API hoopResult_t hoopCommScheduleSettled(hoopComm_t comm, hoopCollective_t collective,
                                              size_t count, hoopDataType_t datatype, int* settled) {
  return guarded(nullptr, [&] {
    const CollectiveArgs args =
        askedCall(comm, collective, count, datatype, settled, "settled", "hoopCommScheduleSettled");
    std::lock_guard lock(comm->impl->operationMutex());
    *settled = scheduleSettled(*comm->impl, args) ? 1 : 0;
  });
}

HOOP_API hoopResult_t hoopCommSetAlgorithms(hoopComm_t comm, const char* algorithms) {
  constexpr const char* kCall = "hoopCommSetAlgorithms";
  // Read before any rank waits on another: a text no rank can read fails on every rank at once,
  // leaving the communicator as it was.
  AlgoOverrides rules;
  const hoopResult_t status = guarded(comm, [&] {
    usableComm(comm, kCall);
    if (inGroup()) {
      fail(hoopInvalidUsage, kCall,
           ": not inside hoopGroupStart/hoopGroupEnd, whose calls run after the group ends");
    }
    if (algorithms == nullptr) return;
    try {
      rules = AlgoOverrides::parse(algorithms);
    } catch (const Error& e) {
      fail(e.code(), kCall, ": ", e.what());
    }
  });
  if (status != hoopSuccess) return status;
  auto adopt = [comm, rules = std::move(rules)]() mutable {
    runOn(comm, [&](Communicator& c) { setAlgorithms(c, std::move(rules)); });
  };
  if (comm->queue != nullptr) return enqueue(comm, std::move(adopt));
  return guarded(comm, adopt);
}
