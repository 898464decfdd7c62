// An emulated event: a sequence of records, each done once the stream it was recorded on reaches
// it. A wait names the record that was latest when the wait was enqueued, not whatever is
// recorded later (CUDA's cudaStreamWaitEvent semantics), so each record has its own state.
//
// A record made on a capturing stream is not a state of its own but a signal of the capture
// (emulated_capture.h): a graph's replays signal their own copy of it, never the event, as a
// CUDA graph's event-record edges do not record the user's event either.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "device/device_runtime.h"
#include "device/emulated/emulated_stream.h"

namespace hoop::emulated {

class Capture;

class EmulatedEvent {
 public:
  static DeviceEvent create();
  // hoopInvalidArgument for null.
  static EmulatedEvent& from(DeviceEvent event);
  // Null: nothing. Records already enqueued or waited on stay valid: operations hold them.
  static void destroy(DeviceEvent event) noexcept;

  struct Record;
  // The latest record: none (never recorded), one made on a running stream, or a capture's
  // signal.
  struct Latest {
    std::shared_ptr<Record> record = nullptr;
    std::shared_ptr<Capture> capture = nullptr;
    size_t signal = 0;
  };

  // A new record, now the latest; the returned operation marks it done.
  StreamOperation record();
  // The capture's `signal` is now the latest record.
  void recordCaptured(std::shared_ptr<Capture> capture, size_t signal);
  Latest latest();
  // An operation that waits until `record` is done; one that does nothing for no record (CUDA:
  // waiting on a never-recorded event does not wait).
  static StreamOperation waitFor(std::shared_ptr<Record> record);

 private:
  std::mutex mutex_;
  Latest latest_;
};

}  // namespace hoop::emulated
