// libibverbs, loaded with dlopen when first needed: hoop links nothing RDMA, and runs unchanged
// where libibverbs.so.1 is absent (the rdma transport then says so and reaches no peer).
//
// The verbs.h header supplies the types and constants at compile time (built only where
// HOOP_HAVE_VERBS says it was found). The functions verbs.h defines inline (ibv_post_send,
// ibv_post_recv, ibv_poll_cq, ibv_req_notify_cq) call through the device context's own table,
// so they work on a context opened through these pointers; everything else the library exports
// is looked up here. ibv_reg_dmabuf_mr is optional (rdma-core 34 and later).
#pragma once

#if defined(HOOP_HAVE_VERBS)

#include <infiniband/verbs.h>

#include <string>

namespace hoop {

struct VerbsLibrary {
  ibv_device** (*getDeviceList)(int*);
  void (*freeDeviceList)(ibv_device**);
  const char* (*getDeviceName)(ibv_device*);
  ibv_context* (*openDevice)(ibv_device*);
  int (*closeDevice)(ibv_context*);
  int (*queryDevice)(ibv_context*, ibv_device_attr*);
  int (*queryPortCompat)(ibv_context*, uint8_t, _compat_ibv_port_attr*);
  int (*queryGid)(ibv_context*, uint8_t, int, ibv_gid*);
  ibv_pd* (*allocPd)(ibv_context*);
  int (*deallocPd)(ibv_pd*);
  ibv_mr* (*regMr)(ibv_pd*, void*, size_t, int);
  ibv_mr* (*regDmabufMr)(ibv_pd*, uint64_t, size_t, uint64_t, int, int);  // may be null
  int (*deregMr)(ibv_mr*);
  ibv_comp_channel* (*createCompChannel)(ibv_context*);
  int (*destroyCompChannel)(ibv_comp_channel*);
  ibv_cq* (*createCq)(ibv_context*, int, void*, ibv_comp_channel*, int);
  int (*destroyCq)(ibv_cq*);
  int (*getCqEvent)(ibv_comp_channel*, ibv_cq**, void**);
  void (*ackCqEvents)(ibv_cq*, unsigned int);
  ibv_qp* (*createQp)(ibv_pd*, ibv_qp_init_attr*);
  int (*modifyQp)(ibv_qp*, ibv_qp_attr*, int);
  int (*destroyQp)(ibv_qp*);
  const char* (*wcStatusStr)(ibv_wc_status);
  int (*getAsyncEvent)(ibv_context*, ibv_async_event*);
  void (*ackAsyncEvent)(ibv_async_event*);
  const char* (*eventTypeStr)(ibv_event_type);

  // Port attributes, as verbs.h's inline ibv_query_port gets them (through the context's
  // extended table where the provider has one).
  int queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attributes) const;
};

// The library, loaded on the first call; nullptr when it cannot be (then `why`, when given, says
// what dlopen or dlsym answered). Thread-safe; the library stays loaded for the process's life.
const VerbsLibrary* verbsLibrary(std::string* why = nullptr);

}  // namespace hoop

#endif  // HOOP_HAVE_VERBS
