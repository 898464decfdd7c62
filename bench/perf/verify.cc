#include "verify.h"

#include "dtype.h"

namespace hoop::perf {
namespace {

void* elementAt(void* base, size_t index, hoopDataType_t type) {
  return static_cast<std::byte*>(base) + index * typeSize(type);
}

}  // namespace

DataPattern checkPattern(const CallSpec& call, uint64_t seed) {
  DataPattern pattern;
  pattern.nranks = call.nranks;
  pattern.seed = seed;
  if (collectiveReduces(call.collective)) pattern.op = call.op;
  return pattern;
}

void prepareCheck(const CallSpec& call, const DataPattern& pattern, const BufferPair& buffers) {
  const CallBuffers at = callBuffers(call, buffers);
  // In-place the input lies inside recv, so poison first and write the input over it.
  void* input = const_cast<void*>(at.send);
  const size_t bytes = call.count * typeSize(call.type);
  const size_t nranks = static_cast<size_t>(call.nranks);
  switch (call.collective) {
    case Collective::kAllReduce:
    case Collective::kReduce:
    case Collective::kSendRecv:
      poisonBytes(at.recv, bytes);
      fillInputs(call.type, input, call.count, pattern, call.rank, 0);
      break;
    case Collective::kBroadcast:
      poisonBytes(at.recv, bytes);
      if (call.rank == call.root) fillInputs(call.type, input, call.count, pattern, call.rank, 0);
      break;
    case Collective::kAllGather:
      poisonBytes(at.recv, bytes * nranks);
      fillInputs(call.type, input, call.count, pattern, call.rank, 0);
      break;
    case Collective::kReduceScatter:
      poisonBytes(at.recv, bytes);
      fillInputs(call.type, input, call.count * nranks, pattern, call.rank, 0);
      break;
    case Collective::kAllToAll:
      // Block j of the input is what goes to rank j: allToAllValue(rank, j, ...).
      poisonBytes(at.recv, bytes * nranks);
      fillInputs(call.type, input, call.count * nranks, pattern, call.rank, 0);
      break;
  }
}

size_t countWrong(const CallSpec& call, const DataPattern& pattern, const BufferPair& buffers) {
  const CallBuffers at = callBuffers(call, buffers);
  const size_t count = call.count;
  switch (call.collective) {
    case Collective::kAllReduce: return countWrongReduced(call.type, at.recv, count, pattern, 0);
    case Collective::kReduce:
      if (call.rank != call.root) return 0;
      return countWrongReduced(call.type, at.recv, count, pattern, 0);
    case Collective::kReduceScatter:
      return countWrongReduced(call.type, at.recv, count, pattern,
                               static_cast<size_t>(call.rank) * count);
    case Collective::kBroadcast:
      return countWrongInputs(call.type, at.recv, count, pattern, call.root, 0);
    case Collective::kSendRecv: {
      const int from = (call.rank - 1 + call.nranks) % call.nranks;
      return countWrongInputs(call.type, at.recv, count, pattern, from, 0);
    }
    case Collective::kAllGather: {
      size_t wrong = 0;
      for (int r = 0; r < call.nranks; ++r) {
        const void* block = elementAt(at.recv, static_cast<size_t>(r) * count, call.type);
        wrong += countWrongInputs(call.type, block, count, pattern, r, 0);
      }
      return wrong;
    }
    case Collective::kAllToAll: {
      // Block r came from rank r: its input block number call.rank, i.e. allToAllValue(r, rank).
      size_t wrong = 0;
      for (int r = 0; r < call.nranks; ++r) {
        const void* block = elementAt(at.recv, static_cast<size_t>(r) * count, call.type);
        wrong += countWrongInputs(call.type, block, count, pattern, r,
                                  static_cast<size_t>(call.rank) * count);
      }
      return wrong;
    }
  }
  return 0;
}

void corruptResult(const CallSpec& call, const BufferPair& buffers) {
  if (call.count == 0) return;
  if (call.collective == Collective::kReduce && call.rank != call.root) return;
  // Little-endian: byte 0 holds the lowest mantissa or integer bit, so the value always changes.
  *static_cast<unsigned char*>(callBuffers(call, buffers).recv) ^= 1u;
}

}  // namespace hoop::perf
