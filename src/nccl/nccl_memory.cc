// Memory and reduction operators: ncclMemAlloc on hoop's device runtime, buffer registration on
// hoop's (hoopCommRegister), windows (which hoop's collectives do not need: their handles only let
// deregistration check its argument), and the premultiplied sum on hoop's.
#include <memory>
#include <set>

#include "nccl/nccl_comm.h"

using namespace hoop;
using namespace hoop::nccl;

namespace {

// A registration record kept in `records` (one of comm's sets, under comm's mutex).
ncclWindow_vidmem* remember(ncclComm* comm, std::set<ncclWindow_vidmem*>& records,
                            std::unique_ptr<ncclWindow_vidmem> record) {
  std::lock_guard lock(comm->mutex);
  records.insert(record.get());
  return record.release();
}

// Takes `record` out of `records`; the caller owns it then.
std::unique_ptr<ncclWindow_vidmem> forget(ncclComm* comm, std::set<ncclWindow_vidmem*>& records,
                                          ncclWindow_vidmem* record, const char* what,
                                          const char* call) {
  std::lock_guard lock(comm->mutex);
  if (records.erase(record) == 0) {
    fail(hoopInvalidArgument, call, ": ", static_cast<void*>(record), " is not a ", what,
         " of this communicator (never registered, or deregistered already)");
  }
  return std::unique_ptr<ncclWindow_vidmem>(record);
}

void checkBuffer(const void* buffer, size_t size, const char* call) {
  if (buffer == nullptr && size > 0) fail(hoopInvalidArgument, call, ": buff is NULL");
}

}  // namespace

HOOP_NCCL_API ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return guarded(nullptr, [&] {
    if (ptr == nullptr) fail(hoopInvalidArgument, "ncclMemAlloc: ptr is NULL");
    return passOn(hoopMemAlloc(ptr, size), "ncclMemAlloc");
  });
}

HOOP_NCCL_API ncclResult_t ncclMemFree(void* ptr) {
  return guarded(nullptr, [&] { return passOn(hoopMemFree(ptr), "ncclMemFree"); });
}

HOOP_NCCL_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size,
                                            void** handle) {
  constexpr const char* kCall = "ncclCommRegister";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    if (handle == nullptr) fail(hoopInvalidArgument, kCall, ": handle is NULL");
    checkBuffer(buff, size, kCall);
    auto record = std::make_unique<ncclWindow_vidmem>(ncclWindow_vidmem{buff, size});
    // NCCL accepts an empty buffer, which hoop's registry refuses: there is nothing to register.
    if (size > 0) passOn(hoopCommRegister(c->hoop, buff, size, &record->hoopHandle), kCall);
    *handle = remember(c, c->registrations, std::move(record));
    return ncclSuccess;
  });
}

HOOP_NCCL_API ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  constexpr const char* kCall = "ncclCommDeregister";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const std::unique_ptr<ncclWindow_vidmem> record = forget(
        c, c->registrations, static_cast<ncclWindow_vidmem*>(handle), "registration handle", kCall);
    if (record->hoopHandle == nullptr) return ncclSuccess;
    return passOn(hoopCommDeregister(c->hoop, record->hoopHandle), kCall);
  });
}

HOOP_NCCL_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size,
                                                  ncclWindow_t* win, int winFlags) {
  constexpr const char* kCall = "ncclCommWindowRegister";
  return guarded(comm, [&] {
    ncclComm* c = liveComm(comm, kCall);
    if (win == nullptr) fail(hoopInvalidArgument, kCall, ": win is NULL");
    checkBuffer(buff, size, kCall);
    if (winFlags != NCCL_WIN_DEFAULT && winFlags != NCCL_WIN_COLL_SYMMETRIC) {
      fail(hoopInvalidArgument, kCall, ": winFlags is ", winFlags,
           ", neither NCCL_WIN_DEFAULT nor NCCL_WIN_COLL_SYMMETRIC");
    }
    *win =
        remember(c, c->windows, std::make_unique<ncclWindow_vidmem>(ncclWindow_vidmem{buff, size}));
    return ncclSuccess;
  });
}

HOOP_NCCL_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  constexpr const char* kCall = "ncclCommWindowDeregister";
  return guarded(comm, [&] {
    ncclComm* c = liveComm(comm, kCall);
    forget(c, c->windows, win, "window", kCall);  // and drops the record
    return ncclSuccess;
  });
}

HOOP_NCCL_API ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar,
                                                    ncclDataType_t datatype,
                                                    ncclScalarResidence_t residence,
                                                    ncclComm_t comm) {
  constexpr const char* kCall = "ncclRedOpCreatePreMulSum";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    if (op == nullptr) fail(hoopInvalidArgument, kCall, ": op is NULL");
    const hoopDataType_t type = reducedType(datatype, kCall);
    hoopRedOp_t created = hoopSum;
    const ncclResult_t result =
        passOn(hoopRedOpCreatePreMulSum(&created, scalar, type,
                                        static_cast<hoopScalarResidence_t>(residence), c->hoop),
               kCall);
    // hoop numbers its operators as NCCL does: the built-in ones, then the created ones.
    *op = static_cast<ncclRedOp_t>(created);
    return result;
  });
}

HOOP_NCCL_API ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  constexpr const char* kCall = "ncclRedOpDestroy";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    return passOn(hoopRedOpDestroy(static_cast<hoopRedOp_t>(op), c->hoop), kCall);
  });
}

HOOP_NCCL_SECOND_NAME(MemAlloc);
HOOP_NCCL_SECOND_NAME(MemFree);
HOOP_NCCL_SECOND_NAME(CommRegister);
HOOP_NCCL_SECOND_NAME(CommDeregister);
HOOP_NCCL_SECOND_NAME(CommWindowRegister);
HOOP_NCCL_SECOND_NAME(CommWindowDeregister);
HOOP_NCCL_SECOND_NAME(RedOpCreatePreMulSum);
HOOP_NCCL_SECOND_NAME(RedOpDestroy);
