// The order a device call's messages reach the streams in.
//
// A host schedule posts sends and receives and lets them all progress at once: a send waits
// only for room in its peer's slots, a receive for its data, and neither holds up the other.
// A stream runs its operations one after another, so one stream for everything would let a send
// waiting for room hold up a receive behind it, and two ranks doing that to each other would
// wait forever. So each call runs on its stream (the main one: receives, kernels, the slots read
// in place) plus one send stream per peer:
//   - a posted send goes on its peer's send stream at once, after an event that orders it behind
//     everything the main stream holds so far (the kernels that made its data);
//   - a posted receive is only recorded, and goes on the main stream, in posting order, before
//     anything else does (a kernel of the executor, a slot read in place, an eager message, the
//     end of the call). Until then sends posted after it do not wait for it: a rank that posts
//     a receive and then a send, as an exchange does, lets its partner's receive be fed;
//   - a send whose buffer a recorded receive writes (a piece received, then forwarded) puts the
//     recorded receives on the main stream first, so the send reads what they wrote;
//   - the end of the call (and Primitives::finish) joins the send streams back into the main
//     stream, so work after the call sees every send done.
// A posted message is complete as soon as it is recorded: what the schedule does next goes on
// the streams behind it. A buffer the schedule reuses after a send only once a later receive
// proves the peer has it is safe: the peer saw the send's flag only after its copy was done.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include "device/device_executor.h"
#include "device/device_runtime.h"

namespace hoop {

// A device connection as the queue sees it: messages move in pieces of at most slotBytes(), each
// enqueued on a stream when the queue decides (a device connection over CUDA IPC, or one staged
// through host memory to another host).
class DeviceSlotLink {
 public:
  virtual size_t slotBytes() const = 0;
  // One piece of a posted message: a send on `stream`, a receive on the main stream.
  virtual void enqueueSendPiece(const char* data, size_t bytes, DeviceStream stream) = 0;
  virtual void enqueueRecvPiece(char* data, size_t bytes) = 0;

 protected:
  ~DeviceSlotLink() = default;
};

class DeviceCallQueue final : public DeferredStreamWork {
 public:
  explicit DeviceCallQueue(DeviceRuntime& runtime) : runtime_(runtime) {}
  ~DeviceCallQueue();
  DeviceCallQueue(const DeviceCallQueue&) = delete;
  DeviceCallQueue& operator=(const DeviceCallQueue&) = delete;

  DeviceRuntime& runtime() const { return runtime_; }
  // The main stream of the current call.
  DeviceStream stream() const { return stream_; }
  void bind(DeviceStream stream) { stream_ = stream; }

  // A send to `peer` over `connection`, on the peer's send stream (see above).
  void postSend(int peer, DeviceSlotLink& connection, const void* data, size_t bytes);
  // A receive, recorded until the next flush.
  void postRecv(DeviceSlotLink& connection, void* data, size_t bytes);
  // Puts the recorded receives on the main stream, in posting order.
  void flush() override;
  // flush(), then the main stream waits for every send stream used since the last join.
  void joinSends();
  // flush(), then the main stream waits for `peer`'s send stream (a schedule reusing a buffer
  // it sent).
  void joinSendsTo(int peer);

 private:
  struct Recorded {
    DeviceSlotLink* connection;
    char* data;
    size_t bytes;
  };
  struct SendStream {
    DeviceStream stream = nullptr;
    DeviceEvent ready = nullptr;  // recorded on the main stream, waited for by this one
    DeviceEvent done = nullptr;   // recorded on this one, waited for by the main stream
    bool used = false;            // since the last join
  };
  // Whether a send of [data, data + bytes) reads what a recorded receive writes.
  bool readsRecorded(const char* data, size_t bytes) const;
  SendStream& sendStreamFor(int peer);
  void join(SendStream& send);

  DeviceRuntime& runtime_;
  DeviceStream stream_ = nullptr;
  std::deque<Recorded> recorded_;
  std::vector<SendStream> sendStreams_;  // by peer rank, made on first use
};

}  // namespace hoop
