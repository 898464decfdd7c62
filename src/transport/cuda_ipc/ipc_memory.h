// RAII over CUDA IPC: a device buffer this rank allocates and exports, a peer's buffer opened
// from its descriptor, and interprocess events to order work across the two processes. The
// groundwork of the cuda_ipc transport (its Connection is not written yet): slots will live in
// an exported buffer that the peer maps.
//
// Rules CUDA sets, which these classes turn into clear errors rather than undefined behaviour:
//   - a process cannot open a handle it exported itself (ranks in one process share pointers
//     directly); importing checks ownerPid.
//   - the exporter must keep its buffer until every importer has closed it: the transport's
//     teardown orders that (importers close, then a barrier, then exporters free).
//   - several ranks may use the same GPU: IPC between processes on one device works.
// No CUDA types in this header. In a build without CUDA every constructor throws
// hoopInvalidUsage ("built without CUDA").
#pragma once

#include <cstddef>

#include "transport/cuda_ipc/ipc_handle.h"

namespace hoop::cuda_ipc {

// cudaMalloc'ed on `device` and exported with cudaIpcGetMemHandle; cudaFree on destruction.
class ExportedDeviceBuffer {
 public:
  ExportedDeviceBuffer(size_t bytes, int device);
  ~ExportedDeviceBuffer();
  ExportedDeviceBuffer(const ExportedDeviceBuffer&) = delete;
  ExportedDeviceBuffer& operator=(const ExportedDeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return descriptor_.bytes; }
  const IpcMemoryDescriptor& descriptor() const { return descriptor_; }

 private:
  void* data_ = nullptr;
  IpcMemoryDescriptor descriptor_;
};

// A peer's exported buffer mapped into this process (cudaIpcOpenMemHandle, on the current
// device, with lazy peer access); cudaIpcCloseMemHandle on destruction.
class ImportedDeviceBuffer {
 public:
  ImportedDeviceBuffer(const IpcMemoryDescriptor& descriptor, int peer);
  ~ImportedDeviceBuffer();
  ImportedDeviceBuffer(const ImportedDeviceBuffer&) = delete;
  ImportedDeviceBuffer& operator=(const ImportedDeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// An interprocess event (no timing) this rank records and a peer waits on.
class ExportedEvent {
 public:
  explicit ExportedEvent(int device);
  ~ExportedEvent();
  ExportedEvent(const ExportedEvent&) = delete;
  ExportedEvent& operator=(const ExportedEvent&) = delete;

  const IpcEventDescriptor& descriptor() const { return descriptor_; }
  // cudaEventRecord on `stream` (a cudaStream_t as void*).
  void record(void* stream);

 private:
  void* event_ = nullptr;  // cudaEvent_t
  IpcEventDescriptor descriptor_;
};

// A peer's event, opened with cudaIpcOpenEventHandle.
class ImportedEvent {
 public:
  ImportedEvent(const IpcEventDescriptor& descriptor, int peer);
  ~ImportedEvent();
  ImportedEvent(const ImportedEvent&) = delete;
  ImportedEvent& operator=(const ImportedEvent&) = delete;

  // Makes `stream` wait for the peer's last record (cudaStreamWaitEvent): no host blocking.
  void waitOn(void* stream);
  // Whether the peer's last record has completed (cudaEventQuery), for host-side polling.
  bool completed();

 private:
  void* event_ = nullptr;  // cudaEvent_t
  int peer_ = -1;
};

}  // namespace hoop::cuda_ipc
