// Reduction ops a program makes: hoopRedOpCreatePreMulSum's, one communicator's each. Their values
// start at hoopNumOps and are never given twice in a process (until 2^31 of them were made), so a
// destroyed op, or one of another communicator, is named as such instead of read as another.
#pragma once

#include <optional>

#include "api/c_api_handle.h"
#include "core/premultiply.h"

namespace hoop::capi {

// The factor a call of `datatype` on `comm` premultiplies by when `op` is one made for it, nothing
// for a built-in op. hoopInvalidArgument naming the op when it is neither, was made for another
// communicator or destroyed, or was made for another datatype.
std::optional<PreMulFactor> premultiplyOf(hoopComm* comm, hoopRedOp_t op, hoopDataType_t datatype,
                                          const char* call);

// Forgets every op made for `comm`, which is being freed.
void forgetOps(hoopComm* comm);

}  // namespace hoop::capi
