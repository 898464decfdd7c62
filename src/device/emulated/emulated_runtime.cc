#include "device/emulated/emulated_runtime.h"

#include "base/error.h"
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
  target.enqueue(EmulatedEvent::from(event).record());
}

void EmulatedRuntime::streamWaitEvent(DeviceStream stream, DeviceEvent event) {
  EmulatedStream& target = EmulatedStream::from(stream);
  target.enqueue(EmulatedEvent::from(event).waitForLatest());
}

void EmulatedRuntime::synchronize(DeviceStream stream) {
  EmulatedStream::from(stream).synchronize();
}

bool EmulatedRuntime::capturing(DeviceStream stream) {
  return EmulatedStream::from(stream).capturing();
}

}  // namespace emulated
}  // namespace hoop
