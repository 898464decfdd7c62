// The C API's buffer registration (hoopCommRegister/hoopCommDeregister): a handle per call, kept
// in the communicator's registry (transport/memory_registry.h).
#include <cstdint>

#include "api/c_api_handle.h"

using namespace hoop;
using namespace hoop::capi;

HOOP_API hoopResult_t hoopCommRegister(const hoopComm_t comm, void* buff, size_t size,
                                       void** handle) {
  return guarded(nullptr, [&] {
    checkedComm(comm, "hoopCommRegister");
    if (handle == nullptr)
      fail(hoopInvalidArgument, "hoopCommRegister: the handle pointer is NULL");
    checkInitialised(comm, "hoopCommRegister");
    const uint64_t id = comm->impl->registry().add(buff, size);
    *handle = reinterpret_cast<void*>(static_cast<uintptr_t>(id));
  });
}

HOOP_API hoopResult_t hoopCommDeregister(const hoopComm_t comm, void* handle) {
  return guarded(nullptr, [&] {
    checkedComm(comm, "hoopCommDeregister");
    checkInitialised(comm, "hoopCommDeregister");
    comm->impl->registry().remove(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle)));
  });
}
