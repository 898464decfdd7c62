#include "device/emulated/emulated_runtime.h"

#include "base/error.h"
#include "device/emulated/emulated_capture.h"
#include "device/emulated/emulated_event.h"
#include "device/emulated/emulated_stream.h"

namespace hoop {

DeviceRuntime& emulatedDeviceRuntime() {
  // Leaked on purpose: a stream thread still running at exit must not find it destroyed.
  static auto* runtime = new emulated::EmulatedRuntime();
  return *runtime;
}

namespace emulated {

std::string EmulatedRuntime::describeDevice(int device) {
  if (device != 0) {
    fail(hoopInvalidArgument, "emulated device ", device,
         " does not exist: there is only device 0");
  }
  return "emulated device 0 (CPU threads)";
}

DeviceStream EmulatedRuntime::createStream() { return EmulatedStream::create(); }

void EmulatedRuntime::destroyStream(DeviceStream stream) noexcept {
  EmulatedStream::destroy(stream);
}

DeviceEvent EmulatedRuntime::createEvent() { return EmulatedEvent::create(); }

void EmulatedRuntime::destroyEvent(DeviceEvent event) noexcept { EmulatedEvent::destroy(event); }

void EmulatedRuntime::recordEvent(DeviceEvent event, DeviceStream stream) {
  EmulatedStream& target = EmulatedStream::from(stream);
  EmulatedEvent& recorded = EmulatedEvent::from(event);
  if (auto capture = target.membership()) {
    recorded.recordCaptured(capture->capture, capture->capture->addSignal(capture->branch));
    return;
  }
  target.enqueue(recorded.record());
}

// CUDA's capture rules (emulated_capture.h): waiting on a captured record joins the capture or
// adds an edge inside it; a capturing stream may not wait on a record made outside the capture.
// CUDA takes one as an external dependency in some modes; here it is always refused, so a
// replay can never depend on a stream outside the graph (it would wait on that record again
// on every replay, though it is long done, or on nothing).
void EmulatedRuntime::streamWaitEvent(DeviceStream stream, DeviceEvent event) {
  EmulatedStream& target = EmulatedStream::from(stream);
  const EmulatedEvent::Latest latest = EmulatedEvent::from(event).latest();
  const auto capture = target.membership();
  if (latest.capture) {
    if (!capture) {
      target.join(latest.capture, latest.signal);
    } else if (capture->capture == latest.capture) {
      capture->capture->addWait(capture->branch, latest.signal);
    } else {
      fail(hoopInvalidUsage,
           "streamWaitEvent: the stream is capturing, and the event was recorded in another "
           "graph capture");
    }
    return;
  }
  if (capture && latest.record) {
    fail(hoopInvalidUsage,
         "streamWaitEvent: a capturing stream cannot wait on an event recorded outside the "
         "capture (emulated device runtime)");
  }
  // A capturing stream waiting on a never-recorded event: nothing to wait for, so no step.
  if (capture) return;
  target.enqueue(EmulatedEvent::waitFor(latest.record));
}

void EmulatedRuntime::synchronize(DeviceStream stream) {
  EmulatedStream::from(stream).synchronize();
}

bool EmulatedRuntime::capturing(DeviceStream stream) {
  return EmulatedStream::from(stream).capturing();
}

}  // namespace emulated
}  // namespace hoop
