#include "transport/rdma/verbs_library.h"

#if defined(HOOP_HAVE_VERBS)

#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "base/error.h"

namespace hoop {
namespace {

struct Loaded {
  VerbsLibrary library{};
  bool ok = false;
  std::string why;
};

template <typename Function>
bool bind(void* handle, const char* name, Function& function, std::string& why) {
  function = reinterpret_cast<Function>(dlsym(handle, name));
  if (function == nullptr && why.empty()) why = str("libibverbs.so.1 has no ", name);
  return function != nullptr;
}

Loaded load() {
  Loaded loaded;
  // Never unloaded: providers it loads keep pointers into it.
  void* handle = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    loaded.why = error != nullptr ? error : "dlopen(libibverbs.so.1) failed";
    return loaded;
  }
  VerbsLibrary& l = loaded.library;
  std::string& why = loaded.why;
  bool ok = bind(handle, "ibv_get_device_list", l.getDeviceList, why);
  ok &= bind(handle, "ibv_free_device_list", l.freeDeviceList, why);
  ok &= bind(handle, "ibv_get_device_name", l.getDeviceName, why);
  ok &= bind(handle, "ibv_open_device", l.openDevice, why);
  ok &= bind(handle, "ibv_close_device", l.closeDevice, why);
  ok &= bind(handle, "ibv_query_device", l.queryDevice, why);
  ok &= bind(handle, "ibv_query_port", l.queryPortCompat, why);
  ok &= bind(handle, "ibv_query_gid", l.queryGid, why);
  ok &= bind(handle, "ibv_alloc_pd", l.allocPd, why);
  ok &= bind(handle, "ibv_dealloc_pd", l.deallocPd, why);
  ok &= bind(handle, "ibv_reg_mr", l.regMr, why);
  ok &= bind(handle, "ibv_dereg_mr", l.deregMr, why);
  ok &= bind(handle, "ibv_create_comp_channel", l.createCompChannel, why);
  ok &= bind(handle, "ibv_destroy_comp_channel", l.destroyCompChannel, why);
  ok &= bind(handle, "ibv_create_cq", l.createCq, why);
  ok &= bind(handle, "ibv_destroy_cq", l.destroyCq, why);
  ok &= bind(handle, "ibv_get_cq_event", l.getCqEvent, why);
  ok &= bind(handle, "ibv_ack_cq_events", l.ackCqEvents, why);
  ok &= bind(handle, "ibv_create_qp", l.createQp, why);
  ok &= bind(handle, "ibv_modify_qp", l.modifyQp, why);
  ok &= bind(handle, "ibv_destroy_qp", l.destroyQp, why);
  ok &= bind(handle, "ibv_wc_status_str", l.wcStatusStr, why);
  ok &= bind(handle, "ibv_get_async_event", l.getAsyncEvent, why);
  ok &= bind(handle, "ibv_ack_async_event", l.ackAsyncEvent, why);
  ok &= bind(handle, "ibv_event_type_str", l.eventTypeStr, why);
  // Optional: GPUDirect RDMA through dma-buf needs it, nothing else does.
  l.regDmabufMr = reinterpret_cast<decltype(l.regDmabufMr)>(dlsym(handle, "ibv_reg_dmabuf_mr"));
  loaded.ok = ok;
  return loaded;
}

}  // namespace

int VerbsLibrary::queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attributes) const {
  std::memset(attributes, 0, sizeof(*attributes));
  if (verbs_context* extended = verbs_get_ctx_op(context, query_port)) {
    return extended->query_port(context, port, attributes, sizeof(*attributes));
  }
  return queryPortCompat(context, port, reinterpret_cast<_compat_ibv_port_attr*>(attributes));
}

const VerbsLibrary* verbsLibrary(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.ok && why != nullptr) *why = loaded.why;
  return loaded.ok ? &loaded.library : nullptr;
}

}  // namespace hoop

#endif  // HOOP_HAVE_VERBS
