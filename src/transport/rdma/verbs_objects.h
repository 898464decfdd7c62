// Every verbs object hoop makes, as an RAII value: a device context with its protection domain
// (shared by all connections on that device), completion channels, completion queues, queue
// pairs and memory regions. Each is destroyed exactly once by its last owner; a count of the
// live ones lets tests prove that nothing leaks.
#pragma once

#if defined(HOOP_HAVE_VERBS)

#include <memory>
#include <string>
#include <vector>

#include "transport/rdma/verbs_library.h"

namespace hoop {

// An open device and one protection domain on it. Opened on first use and shared: every
// connection on the device registers its memory in the same domain.
class VerbsDevice {
 public:
  // Throws hoopSystemError naming the device when it cannot be opened.
  static std::shared_ptr<VerbsDevice> open(const std::string& name);
  ~VerbsDevice();
  VerbsDevice(const VerbsDevice&) = delete;
  VerbsDevice& operator=(const VerbsDevice&) = delete;

  const VerbsLibrary& verbs() const { return verbs_; }
  ibv_context* context() const { return context_; }
  ibv_pd* pd() const { return pd_; }
  const std::string& name() const { return name_; }
  const ibv_device_attr& attributes() const { return attributes_; }
  // The device's pending asynchronous events about `queuePairs` ("QP access error on queue pair
  // 2"), read without waiting and acknowledged; events about other queue pairs are dropped.
  // For error messages: an error at the responder shows only there (and as flushed requests).
  std::string takeEvents(const std::vector<ibv_qp*>& queuePairs) const;

 private:
  VerbsDevice(const VerbsLibrary& verbs, std::string name)
      : verbs_(verbs), name_(std::move(name)) {}

  const VerbsLibrary& verbs_;
  std::string name_;
  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_device_attr attributes_{};
};

struct VerbsDeleter {
  void operator()(ibv_comp_channel* channel) const;
  void operator()(ibv_cq* cq) const;
  void operator()(ibv_qp* qp) const;
  void operator()(ibv_mr* mr) const;
};

using CompletionChannel = std::unique_ptr<ibv_comp_channel, VerbsDeleter>;
using CompletionQueue = std::unique_ptr<ibv_cq, VerbsDeleter>;
using QueuePair = std::unique_ptr<ibv_qp, VerbsDeleter>;
using MemoryRegion = std::unique_ptr<ibv_mr, VerbsDeleter>;

// Each throws hoopSystemError naming the device and the object on failure. The channel's
// descriptor is made non-blocking: the wait loop polls it and reads it only when ready.
CompletionChannel makeCompletionChannel(const VerbsDevice& device);
CompletionQueue makeCompletionQueue(const VerbsDevice& device, int entries,
                                    ibv_comp_channel* channel);
QueuePair makeQueuePair(const VerbsDevice& device, ibv_qp_init_attr& attributes);
MemoryRegion registerMemory(const VerbsDevice& device, void* data, size_t bytes, int access);
// The same for a dma-buf (GPU memory exported by its driver); requires ibv_reg_dmabuf_mr.
MemoryRegion registerDmabuf(const VerbsDevice& device, int fd, uint64_t offset, size_t bytes,
                            uint64_t address, int access);

}  // namespace hoop

#endif  // HOOP_HAVE_VERBS

namespace hoop {

// Verbs objects alive in this process, by kind (all zero in a build without verbs).
struct VerbsObjectCounts {
  int devices = 0;
  int channels = 0;
  int completionQueues = 0;
  int queuePairs = 0;
  int memoryRegions = 0;
  bool operator==(const VerbsObjectCounts&) const = default;
};
VerbsObjectCounts liveVerbsObjects();

}  // namespace hoop
