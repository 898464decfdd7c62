// NCCL's group semantics over hoop's groups. Inside ncclGroupStart/ncclGroupEnd the library keeps
// each call (arguments already checked) and, at the outermost ncclGroupEnd, first creates the
// communicators the group asked for, then issues each communicator's calls inside one
// hoopGroupStart/hoopGroupEnd. hoop runs a group's communicators one after the other, and a call
// on host memory returns only when done: two communicators of this process in one group (ranks
// made by ncclCommInitAll, or several created in one group) would wait for each other forever.
// So communicators are created on a thread each, and each communicator's share of the calls runs
// on a thread of its own when they are on host memory; calls on device memory only enqueue work
// and run in the calling thread, in order, as NCCL's do.
#pragma once

#include <functional>

#include "nccl/nccl_comm.h"

namespace hoop::nccl {

// Whether this thread is between ncclGroupStart and its ncclGroupEnd.
bool inGroup();

// One call's work on hoop: returns hoop's result (hoopGetLastError(NULL) has the message).
using Issue = std::function<hoopResult_t()>;
// Issues now, or inside a group keeps it for ncclGroupEnd. `device`: the call's buffers are
// device memory, so issuing it only enqueues work.
ncclResult_t submit(ncclComm* comm, const char* call, bool device, Issue issue);

// Makes a communicator: fills *made and returns hoop's result.
using Create = std::function<hoopResult_t(hoopComm_t* made)>;
// Creates target's hoop communicator now, or inside a group at ncclGroupEnd (target stays live
// meanwhile, and its calls are refused until then). target may be null: a rank that takes part
// in a split without joining a new communicator.
ncclResult_t createComm(ncclComm* target, const char* call, Create create);

}  // namespace hoop::nccl
