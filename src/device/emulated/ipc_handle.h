// The emulation's DeviceIpcHandle: which shared-memory segment to map, how long it is, and which
// process exported it, in the 64 bytes a CUDA IPC handle takes. A magic word and a version come
// first so a handle from anything else (a CUDA handle, a torn message, zeros) is refused with a
// clear error instead of opening some other file.
//
// Layout (native byte order: both ends are processes of one host):
//   [0, 4)   magic "hEMU"
//   [4]      version (1)
//   [5]      name length, 1..kMaxSegmentName
//   [6, 8)   zero
//   [8, 12)  exporter's pid
//   [12, 20) bytes of the allocation
//   [20, 64) name, not NUL-terminated; zero-padded
#pragma once

#include <cstddef>
#include <string>

#include "device/device_runtime.h"

namespace hoop::emulated {

struct SegmentHandle {
  std::string name;
  size_t bytes = 0;
  int exporter = 0;  // pid
};

DeviceIpcHandle encodeHandle(const SegmentHandle& handle);
// hoopInvalidArgument, saying what is wrong, for anything encodeHandle did not make.
SegmentHandle decodeHandle(const DeviceIpcHandle& handle);

}  // namespace hoop::emulated
