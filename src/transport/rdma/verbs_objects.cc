#include "transport/rdma/verbs_objects.h"

#include <atomic>

namespace hoop {
namespace {

std::atomic<int> liveDevices{0};
std::atomic<int> liveChannels{0};
std::atomic<int> liveQueues{0};
std::atomic<int> livePairs{0};
std::atomic<int> liveRegions{0};

}  // namespace

VerbsObjectCounts liveVerbsObjects() {
  return {liveDevices.load(), liveChannels.load(), liveQueues.load(), livePairs.load(),
          liveRegions.load()};
}

}  // namespace hoop

#if defined(HOOP_HAVE_VERBS)

#include <fcntl.h>

#include <cerrno>
#include <map>
#include <mutex>

#include "base/error.h"

namespace hoop {

std::shared_ptr<VerbsDevice> VerbsDevice::open(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<VerbsDevice>> opened;
  std::lock_guard lock(mutex);
  if (auto shared = opened[name].lock()) return shared;

  std::string why;
  const VerbsLibrary* verbs = verbsLibrary(&why);
  if (verbs == nullptr) fail(hoopSystemError, "cannot load libibverbs.so.1: ", why);
  std::shared_ptr<VerbsDevice> device(new VerbsDevice(*verbs, name));
  int count = 0;
  ibv_device** list = verbs->getDeviceList(&count);
  if (list == nullptr) fail(hoopSystemError, "ibv_get_device_list: ", errnoText(errno));
  for (int i = 0; i < count && device->context_ == nullptr; ++i) {
    if (name == verbs->getDeviceName(list[i])) device->context_ = verbs->openDevice(list[i]);
  }
  const int openError = errno;
  verbs->freeDeviceList(list);
  if (device->context_ == nullptr) {
    fail(hoopSystemError, "cannot open RDMA device ", name, ": ",
         openError != 0 ? errnoText(openError) : std::string("not listed by libibverbs"));
  }
  ++liveDevices;
  if (verbs->queryDevice(device->context_, &device->attributes_) != 0) {
    fail(hoopSystemError, "ibv_query_device(", name, "): ", errnoText(errno));
  }
  // Asynchronous events are only read for error messages, never waited for.
  const int asyncFlags = fcntl(device->context_->async_fd, F_GETFL);
  if (asyncFlags >= 0) fcntl(device->context_->async_fd, F_SETFL, asyncFlags | O_NONBLOCK);
  device->pd_ = verbs->allocPd(device->context_);
  if (device->pd_ == nullptr) fail(hoopSystemError, "ibv_alloc_pd(", name, "): ", errnoText(errno));
  opened[name] = device;
  return device;
}

std::string VerbsDevice::takeEvents(const std::vector<ibv_qp*>& queuePairs) const {
  std::string events;
  ibv_async_event event{};
  for (int taken = 0; taken < 64 && verbs_.getAsyncEvent(context_, &event) == 0; ++taken) {
    for (size_t q = 0; q < queuePairs.size(); ++q) {
      const bool aboutQp =
          event.event_type == IBV_EVENT_QP_FATAL || event.event_type == IBV_EVENT_QP_REQ_ERR ||
          event.event_type == IBV_EVENT_QP_ACCESS_ERR || event.event_type == IBV_EVENT_COMM_EST ||
          event.event_type == IBV_EVENT_SQ_DRAINED ||
          event.event_type == IBV_EVENT_QP_LAST_WQE_REACHED;
      if (aboutQp && event.element.qp == queuePairs[q]) {
        events += str(events.empty() ? "" : ", ", verbs_.eventTypeStr(event.event_type),
                      " on queue pair ", q);
      }
    }
    if (event.event_type == IBV_EVENT_PORT_ERR || event.event_type == IBV_EVENT_DEVICE_FATAL) {
      events += str(events.empty() ? "" : ", ", verbs_.eventTypeStr(event.event_type));
    }
    verbs_.ackAsyncEvent(&event);
  }
  return events;
}

VerbsDevice::~VerbsDevice() {
  if (pd_ != nullptr) verbs_.deallocPd(pd_);
  if (context_ != nullptr) {
    verbs_.closeDevice(context_);
    --liveDevices;
  }
}

namespace {

const VerbsLibrary& loadedVerbs() {
  // Only reached for objects made through a VerbsDevice, so the library is loaded.
  return *verbsLibrary();
}

}  // namespace

void VerbsDeleter::operator()(ibv_comp_channel* channel) const {
  loadedVerbs().destroyCompChannel(channel);
  --liveChannels;
}

void VerbsDeleter::operator()(ibv_cq* cq) const {
  loadedVerbs().destroyCq(cq);
  --liveQueues;
}

void VerbsDeleter::operator()(ibv_qp* qp) const {
  loadedVerbs().destroyQp(qp);
  --livePairs;
}

void VerbsDeleter::operator()(ibv_mr* mr) const {
  loadedVerbs().deregMr(mr);
  --liveRegions;
}

CompletionChannel makeCompletionChannel(const VerbsDevice& device) {
  CompletionChannel channel(device.verbs().createCompChannel(device.context()));
  if (!channel) {
    fail(hoopSystemError, "ibv_create_comp_channel(", device.name(), "): ", errnoText(errno));
  }
  ++liveChannels;
  const int flags = fcntl(channel->fd, F_GETFL);
  if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    fail(hoopSystemError, "fcntl on the completion channel of ", device.name(), ": ",
         errnoText(errno));
  }
  return channel;
}

CompletionQueue makeCompletionQueue(const VerbsDevice& device, int entries,
                                    ibv_comp_channel* channel) {
  CompletionQueue cq(device.verbs().createCq(device.context(), entries, nullptr, channel, 0));
  if (!cq) {
    fail(hoopSystemError, "ibv_create_cq(", device.name(), ", ", entries,
         " entries): ", errnoText(errno));
  }
  ++liveQueues;
  return cq;
}

QueuePair makeQueuePair(const VerbsDevice& device, ibv_qp_init_attr& attributes) {
  QueuePair qp(device.verbs().createQp(device.pd(), &attributes));
  if (!qp) fail(hoopSystemError, "ibv_create_qp(", device.name(), "): ", errnoText(errno));
  ++livePairs;
  return qp;
}

MemoryRegion registerMemory(const VerbsDevice& device, void* data, size_t bytes, int access) {
  MemoryRegion mr(device.verbs().regMr(device.pd(), data, bytes, access));
  if (!mr) {
    const int error = errno;
    fail(hoopSystemError, "ibv_reg_mr(", device.name(), ", ", bytes, " bytes): ", errnoText(error),
         error == ENOMEM || error == EPERM
             ? " (the locked-memory limit, ulimit -l, may be too small for RDMA)"
             : "");
  }
  ++liveRegions;
  return mr;
}

MemoryRegion registerDmabuf(const VerbsDevice& device, int fd, uint64_t offset, size_t bytes,
                            uint64_t address, int access) {
  if (device.verbs().regDmabufMr == nullptr) {
    fail(hoopSystemError, "this libibverbs has no ibv_reg_dmabuf_mr (rdma-core 34 or later)");
  }
  MemoryRegion mr(device.verbs().regDmabufMr(device.pd(), offset, bytes, address, fd, access));
  if (!mr) {
    fail(hoopSystemError, "ibv_reg_dmabuf_mr(", device.name(), ", ", bytes,
         " bytes): ", errnoText(errno));
  }
  ++liveRegions;
  return mr;
}

}  // namespace hoop

#endif  // HOOP_HAVE_VERBS
