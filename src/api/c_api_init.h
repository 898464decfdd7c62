// What the C API's ways of making a communicator share (c_api_init.cc, c_api_split.cc): a
// blocking one made on the calling thread, a non-blocking one made on its queue's thread.
#pragma once

#include <functional>
#include <memory>

#include "api/c_api_handle.h"

namespace hoop::capi {

// Makes the communicator. `announce` (for Communicator::create) lets hoopCommAbort stop it while
// it is being made; the blocking path passes none.
using MakeCommunicator = std::function<std::unique_ptr<Communicator>(
    hoopComm& handle, const std::function<void(Communicator*)>& announce)>;

// A blocking communicator of rank `rank` made now by `make`, published in *out.
hoopResult_t initBlocking(hoopComm_t* out, int rank, const CommSettings& settings,
                          const MakeCommunicator& make);

// A non-blocking one: published in *out at once, made by `make` on its queue's thread;
// hoopInProgress. `rank` may be -1 when `make` learns it (it then sets handle.rank).
hoopResult_t initNonBlocking(hoopComm_t* out, int rank, const CommSettings& settings,
                             MakeCommunicator make);

}  // namespace hoop::capi
