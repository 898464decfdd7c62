#include "core/premultiply.h"

#include <cstring>

#include "base/error.h"
#include "core/communicator.h"
#include "device/cpu/scale.h"
#include "device/device_runtime.h"

namespace hoop {

size_t premultipliedCount(const CollectiveArgs& args, int ranks) {
  return args.kind == OpKind::kReduceScatter ? args.count * static_cast<size_t>(ranks) : args.count;
}

void runPremultipliedCollective(Communicator& comm, CollectiveArgs args,
                                const PreMulFactor& factor) {
  const size_t count = premultipliedCount(args, comm.size());
  if (count > 0) {
    const size_t size = dataTypeSize(args.type);
    std::array<uint8_t, 8> value = factor.value;
    switch (factor.source) {
      case PreMulFactor::Source::kValue: break;
      case PreMulFactor::Source::kHostPointer:
        std::memcpy(value.data(), factor.pointer, size);
        break;
      case PreMulFactor::Source::kDevicePointer:
        deviceRuntime().download(value.data(), factor.pointer, size);
        break;
    }
    char* scaled = comm.premultipliedInput().reserve(count * size);
    scale(scaled, args.send, count, args.type, value.data());
    args.send = scaled;
  }
  runCollective(comm, args);
}

}  // namespace hoop
