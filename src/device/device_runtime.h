// The device operations hoop's device path is built from, and nothing more: memory, streams,
// events, the element-wise kernels, flag writes and waits ordered on a stream, and sharing
// memory between the processes of one host. Two runtimes implement it:
//   - CUDA (device/cuda/cuda_runtime.cc): the CUDA runtime and driver on a GPU;
//   - emulated (device/emulated/): the same operations on the CPU, for the machines that build
//     and test hoop without a GPU. Streams are threads that run their operations in order,
//     device memory is shared-memory segments, kernels are the CPU kernels (bitwise identical to
//     the CUDA ones by contract), flags are atomics in shared memory.
// Everything above this seam (the device connections, the device executor, the schedules) runs
// unchanged on either, so the CPU runs in CI exercise the real protocol across real processes.
//
// Stream-ordered calls only enqueue: they return before the operation runs, and their buffers
// must stay valid until the stream reaches it. They are graph-capturable on CUDA (no allocation,
// no synchronisation): copy, reduceCopyFinal, finishAverage, scale, writeFlag, waitFlag,
// addToCounter, recordEvent, streamWaitEvent.
//
// Flags are 32-bit words in host memory shared between the processes of one host and made
// addressable by the device (mapHost): a stream writes and waits on them without holding a
// processor (CUDA: cuStreamWriteValue32 / cuStreamWaitValue32, which the GPU's front end runs),
// so ranks of several processes on one GPU make progress without MPS, and the host can write
// them too (to release every waiting stream on abort).
//
// Errors: hoop::Error, hoopUnhandledCudaError with the runtime's message for CUDA's failures,
// hoopSystemError for the emulation's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/types.h"
#include "device/memory_kind.h"

namespace hoop {

// Opaque handles: a cudaStream_t and a cudaEvent_t on CUDA (nullptr is CUDA's legacy default
// stream, which the emulation does not have).
using DeviceStream = void*;
using DeviceEvent = void*;

// An exported allocation as it travels to another process of the host: 64 opaque bytes (a
// cudaIpcMemHandle_t, or the emulation's segment name).
inline constexpr size_t kDeviceIpcBytes = 64;
using DeviceIpcHandle = std::array<uint8_t, kDeviceIpcBytes>;

// The factor scale() multiplies by: one element of the call's type, read from device memory when
// the stream reaches the kernel (a factor the program may still change after enqueueing), or
// carried with the launch by value.
struct ScaleFactor {
  const void* onDevice = nullptr;  // set: read there, in stream order
  std::array<uint8_t, 8> value{};  // otherwise: the element's bytes
};

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // "cuda" or "emulated": for messages and test names.
  virtual const char* name() const = 0;
  // The current device's ordinal (0 in the emulation), and a description for error messages
  // ("GPU 0 (NVIDIA H200, 0000:19:00.0)").
  virtual int currentDevice() = 0;
  virtual std::string describeDevice(int device) = 0;

  // Device memory of the current device: allocated, freed (null: nothing), and what a pointer
  // is (host, device or managed; host for anything the runtime does not know).
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* data) noexcept = 0;
  virtual MemoryKind kindOf(const void* pointer) = 0;

  // Sharing an allocation with another process of this host. exportMemory takes a pointer that
  // allocate() returned (the whole allocation); importMemory maps a peer's export here (never
  // this process's own: CUDA refuses it) and closeImported unmaps it. The exporter must keep
  // the allocation until every importer has closed it.
  virtual DeviceIpcHandle exportMemory(void* data) = 0;
  virtual void* importMemory(const DeviceIpcHandle& handle, size_t bytes) = 0;
  virtual void closeImported(void* data) noexcept = 0;

  // Host memory (page-aligned, `bytes` a multiple of the page size) made addressable by the
  // device: returns the address the device uses for it, the address flag operations take.
  // unmapHost undoes it before the memory is unmapped.
  virtual void* mapHost(void* host, size_t bytes) = 0;
  virtual void unmapHost(void* host) noexcept = 0;

  // Host memory into device memory and back, blocking the calling thread until done: for tests
  // and tools that fill and check device buffers, never on a collective's path.
  virtual void upload(void* device, const void* host, size_t bytes) = 0;
  virtual void download(void* host, const void* device, size_t bytes) = 0;

  // Streams and events. Events are for ordering only (no timing).
  virtual DeviceStream createStream() = 0;
  virtual void destroyStream(DeviceStream stream) noexcept = 0;
  virtual DeviceEvent createEvent() = 0;
  virtual void destroyEvent(DeviceEvent event) noexcept = 0;
  virtual void recordEvent(DeviceEvent event, DeviceStream stream) = 0;
  virtual void streamWaitEvent(DeviceStream stream, DeviceEvent event) = 0;
  // Blocks the calling thread until everything enqueued on `stream` so far has run; throws the
  // stream's error, if it has one.
  virtual void synchronize(DeviceStream stream) = 0;
  // Whether `stream` is being captured into a graph: then no host-side wait may be made on it.
  virtual bool capturing(DeviceStream stream) = 0;

  // Stream-ordered kernels, with device/cuda/kernels.h's contract (the CPU kernels' bits).
  // copy: dst and src do not overlap, or are equal (then nothing).
  virtual void copy(void* dst, const void* src, size_t bytes, DeviceStream stream) = 0;
  // out1 = out2 = a op b, out2 may be null; for kAvg divided by `divisor` (0 and 1: no division).
  virtual void reduceCopyFinal(void* out1, void* out2, const void* a, const void* b, size_t count,
                               DataType type, RedOp op, size_t divisor, DeviceStream stream) = 0;
  // out = in / divisor for kAvg, else out = in.
  virtual void finishAverage(void* out, const void* in, size_t count, DataType type, RedOp op,
                             size_t divisor, DeviceStream stream) = 0;
  // out = in * factor, element-wise with kProd's rules (a premultiplied sum's first step). out
  // and in do not overlap, or are equal.
  virtual void scale(void* out, const void* in, size_t count, DataType type,
                     const ScaleFactor& factor, DeviceStream stream) = 0;

  // Stream-ordered flag operations on mapHost'ed memory (the device's address of it).
  // writeFlag: *flag = value, after every earlier operation of the stream, its memory writes
  // visible to the other processes of the host before the flag is.
  virtual void writeFlag(uint32_t* flag, uint32_t value, DeviceStream stream) = 0;
  // waitFlag: the stream goes on once (*flag & mask) != 0, and later operations see every write
  // the flag's writer made before it.
  virtual void waitFlag(const uint32_t* flag, uint32_t mask, DeviceStream stream) = 0;
  // addToCounter: *counter += 1 once the stream reaches it (a kernel's atomic on CUDA): progress
  // that a graph replayed many times still counts.
  virtual void addToCounter(uint32_t* counter, DeviceStream stream) = 0;
};

// The runtime hoop's device path uses in this process: the emulation when HOOP_DEVICE_EMULATION=1
// (tests on machines without a GPU), else CUDA. hoopInvalidUsage where neither can serve: a
// build without CUDA and no emulation asked for.
DeviceRuntime& deviceRuntime();
// Whether deviceRuntime() is the emulation.
bool deviceEmulated();

}  // namespace hoop
