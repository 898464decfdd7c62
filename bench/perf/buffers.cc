#include "buffers.h"

#include <cstring>
#include <new>

#include "dtype.h"

namespace hoop::perf {

HostBuffer::HostBuffer(size_t bytes) : bytes_(bytes) {
  constexpr size_t kPage = 4096;
  // aligned_alloc wants a multiple of the alignment; one page at least so data() is never null.
  const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  memory_.reset(std::aligned_alloc(kPage, rounded == 0 ? kPage : rounded));
  if (!memory_) throw std::bad_alloc();
  std::memset(memory_.get(), 0, rounded == 0 ? kPage : rounded);
}

CallBuffers callBuffers(const CallSpec& call, const BufferPair& buffers) {
  if (!call.inPlace) return {buffers.send, buffers.recv};
  auto* base = static_cast<std::byte*>(buffers.recv);
  const size_t ownBlock = static_cast<size_t>(call.rank) * call.count * typeSize(call.type);
  switch (call.collective) {
    case Collective::kAllGather: return {base + ownBlock, base};
    case Collective::kReduceScatter: return {base, base + ownBlock};
    default: return {base, base};
  }
}

}  // namespace hoop::perf
