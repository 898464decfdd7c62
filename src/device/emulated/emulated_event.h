// An emulated event: a sequence of records, each done once the stream it was recorded on reaches
// it. A wait names the record that was latest when the wait was enqueued, not whatever is
// recorded later (CUDA's cudaStreamWaitEvent semantics), so each record has its own state.
#pragma once

#include <memory>
#include <mutex>

#include "device/device_runtime.h"
#include "device/emulated/emulated_stream.h"

namespace hoop::emulated {

class EmulatedEvent {
 public:
  static DeviceEvent create();
  // hoopInvalidArgument for null.
  static EmulatedEvent& from(DeviceEvent event);
  // Null: nothing. Records already enqueued or waited on stay valid: operations hold them.
  static void destroy(DeviceEvent event) noexcept;

  // A new record, now the latest; the returned operation marks it done.
  StreamOperation record();
  // An operation that waits until the latest record is done; one that does nothing when the
  // event was never recorded (CUDA: waiting on a never-recorded event does not wait).
  StreamOperation waitForLatest();

  struct Record;

 private:
  std::mutex mutex_;
  std::shared_ptr<Record> latest_;
};

}  // namespace hoop::emulated
