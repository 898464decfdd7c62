// A program written for NCCL, run on hoop's libnccl.so.2. It is built twice from this file: once
// against NCCL's own nccl.h (where the machine has it), once against hoop's, and both builds link
// hoop's library. It checks the ABI a compiled program carries (every enum value, the layout of
// ncclConfig_t, ncclUniqueId and ncclSimInfo_t, the initializers' values), that the library it
// runs on is hoop's and not NCCL's, and then, as one rank of a job started by hooprun, every
// collective, datatype and reduction on host buffers, each result compared exactly.
//
//   hooprun -np N nccl_abi_conformance --library PATH [--not-library PATH] [--id-dir DIR]
//   nccl_abi_conformance --clique N --library PATH     (one process: ncclCommInitAll and a group)
//   ... --registered-only   (under hooprun: only the ring shift between registered buffers, for
//                            the RDMA guest, where it takes the zero-copy path)
//
// Ranks learn the unique id from rank 0 through a file named after the job's secret (fresh for
// every hooprun job). Exit status 0 and "OK rank r" when every check passed.
#include <dlfcn.h>
#include <link.h>
#include <nccl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;
int checks = 0;
int myRank = -1;

template <typename A, typename B>
void expectEqual(const char* what, A actual, B expected) {
  ++checks;
  if (static_cast<long long>(actual) != static_cast<long long>(expected)) {
    ++failures;
    std::printf("[rank %d] WRONG %s: %lld, expected %lld\n", myRank, what,
                static_cast<long long>(actual), static_cast<long long>(expected));
  }
}

// An NCCL call that must succeed; stops the program with the library's message otherwise.
void mustSucceed(ncclResult_t result, const char* what, ncclComm_t comm = nullptr) {
  ++checks;
  if (result == ncclSuccess) return;
  std::printf("[rank %d] FAILED %s: %s (%d): %s\n", myRank, what, ncclGetErrorString(result),
              static_cast<int>(result), ncclGetLastError(comm));
  std::exit(1);
}

#define ABI_VALUE(name, expected) expectEqual(#name, name, expected)
#define ABI_OFFSET(type, field, expected) \
  expectEqual("offsetof(" #type ", " #field ")", offsetof(type, field), expected)

// The numbers a compiled NCCL program carries: NCCL 2.28.9's.
void checkAbi() {
  ABI_VALUE(NCCL_VERSION_CODE, 22809);
  ABI_VALUE(NCCL_VERSION(2, 28, 9), 22809);
  ABI_VALUE(NCCL_VERSION(2, 8, 4), 2804);
  ABI_VALUE(NCCL_UNIQUE_ID_BYTES, 128);
  ABI_VALUE(NCCL_SPLIT_NOCOLOR, -1);
  ABI_VALUE(NCCL_CONFIG_UNDEF_INT, INT_MIN);
  ABI_VALUE(NCCL_WIN_DEFAULT, 0);
  ABI_VALUE(NCCL_WIN_COLL_SYMMETRIC, 1);
  ABI_VALUE(NCCL_WIN_REQUIRED_ALIGNMENT, 4096);
  ABI_VALUE(NCCL_CTA_POLICY_DEFAULT, 0);
  ABI_VALUE(NCCL_CTA_POLICY_EFFICIENCY, 1);
  ABI_VALUE(NCCL_CTA_POLICY_ZERO, 2);
  ABI_VALUE(NCCL_SHRINK_DEFAULT, 0);
  ABI_VALUE(NCCL_SHRINK_ABORT, 1);
  ABI_VALUE(NCCL_REVOKE_DEFAULT, 0);
  expectEqual("NCCL_UNDEF_FLOAT * 4", NCCL_UNDEF_FLOAT * 4, -4);

  ABI_VALUE(ncclSuccess, 0);
  ABI_VALUE(ncclUnhandledCudaError, 1);
  ABI_VALUE(ncclSystemError, 2);
  ABI_VALUE(ncclInternalError, 3);
  ABI_VALUE(ncclInvalidArgument, 4);
  ABI_VALUE(ncclInvalidUsage, 5);
  ABI_VALUE(ncclRemoteError, 6);
  ABI_VALUE(ncclInProgress, 7);
  ABI_VALUE(ncclNumResults, 8);
  ABI_VALUE(sizeof(ncclResult_t), 4);

  ABI_VALUE(ncclSum, 0);
  ABI_VALUE(ncclProd, 1);
  ABI_VALUE(ncclMax, 2);
  ABI_VALUE(ncclMin, 3);
  ABI_VALUE(ncclAvg, 4);
  ABI_VALUE(ncclNumOps, 5);
  ABI_VALUE(ncclMaxRedOp, 0x7fffffff);
  ABI_VALUE(sizeof(ncclRedOp_t), 4);

  ABI_VALUE(ncclInt8, 0);
  ABI_VALUE(ncclChar, 0);
  ABI_VALUE(ncclUint8, 1);
  ABI_VALUE(ncclInt32, 2);
  ABI_VALUE(ncclInt, 2);
  ABI_VALUE(ncclUint32, 3);
  ABI_VALUE(ncclInt64, 4);
  ABI_VALUE(ncclUint64, 5);
  ABI_VALUE(ncclFloat16, 6);
  ABI_VALUE(ncclHalf, 6);
  ABI_VALUE(ncclFloat32, 7);
  ABI_VALUE(ncclFloat, 7);
  ABI_VALUE(ncclFloat64, 8);
  ABI_VALUE(ncclDouble, 8);
  ABI_VALUE(ncclBfloat16, 9);
  ABI_VALUE(ncclFloat8e4m3, 10);
  ABI_VALUE(ncclFloat8e5m2, 11);
  ABI_VALUE(ncclNumTypes, 12);
  ABI_VALUE(sizeof(ncclDataType_t), 4);
  ABI_VALUE(ncclScalarDevice, 0);
  ABI_VALUE(ncclScalarHostImmediate, 1);

  ABI_VALUE(sizeof(ncclUniqueId), 128);
  ABI_VALUE(sizeof(ncclComm_t), sizeof(void*));
  ABI_VALUE(sizeof(ncclConfig_t), 80);
  ABI_OFFSET(ncclConfig_t, size, 0);
  ABI_OFFSET(ncclConfig_t, magic, 8);
  ABI_OFFSET(ncclConfig_t, version, 12);
  ABI_OFFSET(ncclConfig_t, blocking, 16);
  ABI_OFFSET(ncclConfig_t, cgaClusterSize, 20);
  ABI_OFFSET(ncclConfig_t, minCTAs, 24);
  ABI_OFFSET(ncclConfig_t, maxCTAs, 28);
  ABI_OFFSET(ncclConfig_t, netName, 32);
  ABI_OFFSET(ncclConfig_t, splitShare, 40);
  ABI_OFFSET(ncclConfig_t, trafficClass, 44);
  ABI_OFFSET(ncclConfig_t, commName, 48);
  ABI_OFFSET(ncclConfig_t, collnetEnable, 56);
  ABI_OFFSET(ncclConfig_t, CTAPolicy, 60);
  ABI_OFFSET(ncclConfig_t, shrinkShare, 64);
  ABI_OFFSET(ncclConfig_t, nvlsCTAs, 68);
  ABI_OFFSET(ncclConfig_t, nChannelsPerNetPeer, 72);
  ABI_OFFSET(ncclConfig_t, nvlinkCentricSched, 76);
  ABI_VALUE(sizeof(ncclSimInfo_t), 24);
  ABI_OFFSET(ncclSimInfo_t, size, 0);
  ABI_OFFSET(ncclSimInfo_t, magic, 8);
  ABI_OFFSET(ncclSimInfo_t, version, 12);
  ABI_OFFSET(ncclSimInfo_t, estimatedTime, 16);

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  expectEqual("config.size", config.size, 80);
  expectEqual("config.magic", config.magic, 0xcafebeefu);
  expectEqual("config.version", config.version, 22809);
  const int unset[] = {config.blocking,      config.cgaClusterSize,      config.minCTAs,
                       config.maxCTAs,       config.splitShare,          config.trafficClass,
                       config.collnetEnable, config.CTAPolicy,           config.shrinkShare,
                       config.nvlsCTAs,      config.nChannelsPerNetPeer, config.nvlinkCentricSched};
  for (int value : unset)
    expectEqual("an unset int field of NCCL_CONFIG_INITIALIZER", value, INT_MIN);
  expectEqual("config.netName", config.netName == nullptr, 1);
  expectEqual("config.commName", config.commName == nullptr, 1);
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  expectEqual("sim.size", sim.size, 24);
  expectEqual("sim.magic", sim.magic, 0x74685283u);
  expectEqual("sim.version", sim.version, 22809);
}

// The library ncclAllReduce came from must be `expected` (hoop's), libhoop must be in the process,
// and `forbidden` (NCCL's own) must not be loaded at all.
void checkLibrary(const std::string& expected, const std::string& forbidden) {
  void* symbol = dlsym(RTLD_DEFAULT, "ncclAllReduce");
  Dl_info info{};
  ++checks;
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) {
    std::printf("[rank %d] FAILED: ncclAllReduce is not found in the process\n", myRank);
    std::exit(1);
  }
  char* loaded = realpath(info.dli_fname, nullptr);
  char* wanted = realpath(expected.c_str(), nullptr);
  const bool same = loaded != nullptr && wanted != nullptr && strcmp(loaded, wanted) == 0;
  if (!same) {
    ++failures;
    std::printf("[rank %d] WRONG library: ncclAllReduce comes from %s, expected %s\n", myRank,
                info.dli_fname, expected.c_str());
  }
  free(loaded);
  free(wanted);
  expectEqual("libhoop loaded (hoopGetVersion found)",
              dlsym(RTLD_DEFAULT, "hoopGetVersion") != nullptr, 1);
  if (forbidden.empty()) return;
  struct Search {
    std::string path;
    bool found = false;
  } search;
  char* resolved = realpath(forbidden.c_str(), nullptr);
  search.path = resolved != nullptr ? resolved : forbidden;
  free(resolved);
  dl_iterate_phdr(
      [](dl_phdr_info* object, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        char* path = realpath(object->dlpi_name, nullptr);
        if (path != nullptr && s->path == path) s->found = true;
        free(path);
        return 0;
      },
      &search);
  expectEqual("NCCL's own library loaded", search.found, 0);
}

// ---- Values: small integers, exact in every datatype, and their encodings. ----

uint16_t halfBits(float value) {
  // Exact for the small integers used here: sign, exponent rebased from 127 to 15, 10 bits of
  // mantissa (the low 13 bits of the float's are zero for them).
  uint32_t bits;
  memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffffu) == 0) return static_cast<uint16_t>(bits >> 16);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent) << 10) |
                               ((bits >> 13) & 0x3ffu));
}

uint16_t bf16Bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  return static_cast<uint16_t>(bits >> 16);
}

size_t sizeOf(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    default: return 8;
  }
}

// Writes `value` (an integer, exact in `type`) as element `index` of `buffer`.
void put(void* buffer, size_t index, ncclDataType_t type, long long value) {
  char* at = static_cast<char*>(buffer) + index * sizeOf(type);
  switch (type) {
    case ncclInt8: *reinterpret_cast<int8_t*>(at) = static_cast<int8_t>(value); break;
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: *reinterpret_cast<uint8_t*>(at) = static_cast<uint8_t>(value); break;
    case ncclInt32: *reinterpret_cast<int32_t*>(at) = static_cast<int32_t>(value); break;
    case ncclUint32: *reinterpret_cast<uint32_t*>(at) = static_cast<uint32_t>(value); break;
    case ncclInt64: *reinterpret_cast<int64_t*>(at) = value; break;
    case ncclUint64: *reinterpret_cast<uint64_t*>(at) = static_cast<uint64_t>(value); break;
    case ncclFloat16: {
      const uint16_t bits = halfBits(static_cast<float>(value));
      memcpy(at, &bits, 2);
      break;
    }
    case ncclBfloat16: {
      const uint16_t bits = bf16Bits(static_cast<float>(value));
      memcpy(at, &bits, 2);
      break;
    }
    case ncclFloat32: *reinterpret_cast<float*>(at) = static_cast<float>(value); break;
    case ncclFloat64: *reinterpret_cast<double*>(at) = static_cast<double>(value); break;
    default: break;
  }
}

using Buffer = std::vector<char>;
Buffer make(size_t count, ncclDataType_t type) { return Buffer(count * sizeOf(type) + 1, 0); }

// Compares `count` elements of `actual` with those of `expected`, byte for byte.
void expectSame(const Buffer& actual, const Buffer& expected, size_t count, ncclDataType_t type,
                const std::string& what) {
  ++checks;
  const size_t bytes = count * sizeOf(type);
  if (memcmp(actual.data(), expected.data(), bytes) == 0) return;
  ++failures;
  size_t first = 0;
  while (first < bytes && actual[first] == expected[first]) ++first;
  std::printf("[rank %d] WRONG %s: element %zu differs\n", myRank, what.c_str(),
              first / sizeOf(type));
}

const ncclDataType_t kReduced[] = {ncclInt8,   ncclUint8,   ncclInt32,   ncclUint32,  ncclInt64,
                                   ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16};
const ncclDataType_t kMoved[] = {ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
                                 ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
                                 ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
const ncclRedOp_t kOps[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};

// Rank r's addend for sum and avg: 1, 2, ..., with the last rank's chosen so the total divides by
// the rank count (an average exact in every type).
long long addend(int rank, int size) {
  if (rank < size - 1) return rank + 1;
  const long long before = static_cast<long long>(size - 1) * size / 2;
  const long long last = (size - before % size) % size;
  return last == 0 ? size : last;
}

// Rank r's element i for reduction `op`: every value and every result fits int8.
long long reducedInput(ncclRedOp_t op, int rank, int size, size_t i) {
  switch (op) {
    case ncclProd: return 1 + static_cast<long long>((i + static_cast<size_t>(rank)) % 2);
    case ncclMax:
    case ncclMin: return static_cast<long long>((i * 7 + static_cast<size_t>(rank) * 3) % 11);
    default: return static_cast<long long>(i % 5) + addend(rank, size);
  }
}

long long reducedResult(ncclRedOp_t op, int size, size_t i) {
  long long result = reducedInput(op, 0, size, i);
  for (int r = 1; r < size; ++r) {
    const long long v = reducedInput(op, r, size, i);
    switch (op) {
      case ncclProd: result *= v; break;
      case ncclMax: result = v > result ? v : result; break;
      case ncclMin: result = v < result ? v : result; break;
      default: result += v; break;
    }
  }
  return op == ncclAvg ? result / size : result;
}

// Rank r's element i of data that is only moved (fits int8 and uint8). The period, 113, divides
// none of the block sizes, so a block taken from the wrong place differs.
long long movedInput(int rank, size_t i) {
  return static_cast<long long>((static_cast<size_t>(rank) * 37 + i * 11) % 113);
}

std::string label(const char* call, ncclDataType_t type, int op = -1, size_t count = 0) {
  std::ostringstream out;
  out << call << " type " << static_cast<int>(type);
  if (op >= 0) out << " op " << op;
  if (count != 0) out << " count " << count;
  return out.str();
}

// ---- The collectives, at every datatype and reduction, on host buffers. ----

void runCollectives(ncclComm_t comm, int rank, int size) {
  for (ncclDataType_t type : kReduced) {
    for (ncclRedOp_t op : kOps) {
      for (size_t count : {size_t{1}, size_t{1000}}) {
        Buffer send = make(count, type), recv = make(count, type), want = make(count, type);
        for (size_t i = 0; i < count; ++i) {
          put(send.data(), i, type, reducedInput(op, rank, size, i));
          put(want.data(), i, type, reducedResult(op, size, i));
        }
        mustSucceed(ncclAllReduce(send.data(), recv.data(), count, type, op, comm, nullptr),
                    "ncclAllReduce", comm);
        expectSame(recv, want, count, type, label("ncclAllReduce", type, op, count));
        // In place.
        mustSucceed(ncclAllReduce(send.data(), send.data(), count, type, op, comm, nullptr),
                    "ncclAllReduce in place", comm);
        expectSame(send, want, count, type, label("ncclAllReduce in place", type, op, count));
      }
      const size_t count = 513;
      const int root = (static_cast<int>(type) + static_cast<int>(op)) % size;
      Buffer send = make(count, type), recv = make(count, type), want = make(count, type);
      for (size_t i = 0; i < count; ++i) {
        put(send.data(), i, type, reducedInput(op, rank, size, i));
        put(want.data(), i, type, reducedResult(op, size, i));
      }
      mustSucceed(ncclReduce(send.data(), recv.data(), count, type, op, root, comm, nullptr),
                  "ncclReduce", comm);
      if (rank == root) expectSame(recv, want, count, type, label("ncclReduce", type, op));

      const size_t block = 257;
      Buffer whole = make(block * static_cast<size_t>(size), type), mine = make(block, type),
             wantBlock = make(block, type);
      for (size_t i = 0; i < block * static_cast<size_t>(size); ++i) {
        put(whole.data(), i, type, reducedInput(op, rank, size, i));
      }
      for (size_t i = 0; i < block; ++i) {
        put(wantBlock.data(), i, type,
            reducedResult(op, size, static_cast<size_t>(rank) * block + i));
      }
      mustSucceed(ncclReduceScatter(whole.data(), mine.data(), block, type, op, comm, nullptr),
                  "ncclReduceScatter", comm);
      expectSame(mine, wantBlock, block, type, label("ncclReduceScatter", type, op));
    }
  }

  for (ncclDataType_t type : kMoved) {
    const size_t count = 300;
    const size_t ranks = static_cast<size_t>(size);
    // All-gather: rank q's block at q * count.
    Buffer mine = make(count, type), all = make(count * ranks, type),
           wantAll = make(count * ranks, type);
    for (size_t i = 0; i < count; ++i) put(mine.data(), i, type, movedInput(rank, i));
    for (int q = 0; q < size; ++q) {
      for (size_t i = 0; i < count; ++i) {
        put(wantAll.data(), static_cast<size_t>(q) * count + i, type, movedInput(q, i));
      }
    }
    mustSucceed(ncclAllGather(mine.data(), all.data(), count, type, comm, nullptr), "ncclAllGather",
                comm);
    expectSame(all, wantAll, count * ranks, type, label("ncclAllGather", type));

    // Broadcast from the last rank, and ncclBcast (in place) from rank 0.
    const int root = size - 1;
    Buffer got = make(count, type), wantRoot = make(count, type);
    for (size_t i = 0; i < count; ++i) put(wantRoot.data(), i, type, movedInput(root, i));
    mustSucceed(ncclBroadcast(mine.data(), got.data(), count, type, root, comm, nullptr),
                "ncclBroadcast", comm);
    expectSame(got, wantRoot, count, type, label("ncclBroadcast", type));
    Buffer inPlace = mine, wantZero = make(count, type);
    for (size_t i = 0; i < count; ++i) put(wantZero.data(), i, type, movedInput(0, i));
    mustSucceed(ncclBcast(inPlace.data(), count, type, 0, comm, nullptr), "ncclBcast", comm);
    expectSame(inPlace, wantZero, count, type, label("ncclBcast", type));

    // All-to-all: block j of rank q goes to rank j.
    const size_t each = 100;
    Buffer out = make(each * ranks, type), in = make(each * ranks, type),
           wantIn = make(each * ranks, type);
    for (int j = 0; j < size; ++j) {
      for (size_t i = 0; i < each; ++i) {
        const size_t at = static_cast<size_t>(j) * each + i;
        put(out.data(), at, type, movedInput(rank * 3 + j, i));
        put(wantIn.data(), at, type, movedInput(j * 3 + rank, i));
      }
    }
    mustSucceed(ncclAlltoAll(out.data(), in.data(), each, type, comm, nullptr), "ncclAlltoAll",
                comm);
    expectSame(in, wantIn, each * ranks, type, label("ncclAlltoAll", type));

    // Gather to the last rank (in place there), scatter from rank 0.
    Buffer gathered = make(count * ranks, type);
    const int gatherRoot = size - 1;
    const char* gatherSend = mine.data();
    if (rank == gatherRoot) {
      memcpy(gathered.data() + static_cast<size_t>(rank) * count * sizeOf(type), mine.data(),
             count * sizeOf(type));
      gatherSend = gathered.data() + static_cast<size_t>(rank) * count * sizeOf(type);
    }
    mustSucceed(ncclGather(gatherSend, gathered.data(), count, type, gatherRoot, comm, nullptr),
                "ncclGather", comm);
    if (rank == gatherRoot) {
      expectSame(gathered, wantAll, count * ranks, type, label("ncclGather", type));
    }
    Buffer scattered = make(count, type), wantScattered = make(count, type);
    for (size_t i = 0; i < count; ++i)
      put(wantScattered.data(), i, type, movedInput(0, rank * count + i));
    Buffer source = make(count * ranks, type);
    for (size_t i = 0; i < count * ranks; ++i) put(source.data(), i, type, movedInput(0, i));
    mustSucceed(ncclScatter(source.data(), scattered.data(), count, type, 0, comm, nullptr),
                "ncclScatter", comm);
    expectSame(scattered, wantScattered, count, type, label("ncclScatter", type));

    // A ring of sends and receives in one group.
    const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
    Buffer fromPrevious = make(count, type), wantPrevious = make(count, type);
    for (size_t i = 0; i < count; ++i) put(wantPrevious.data(), i, type, movedInput(previous, i));
    mustSucceed(ncclGroupStart(), "ncclGroupStart");
    mustSucceed(ncclSend(mine.data(), count, type, next, comm, nullptr), "ncclSend", comm);
    mustSucceed(ncclRecv(fromPrevious.data(), count, type, previous, comm, nullptr), "ncclRecv",
                comm);
    mustSucceed(ncclGroupEnd(), "ncclGroupEnd", comm);
    expectSame(fromPrevious, wantPrevious, count, type, label("ncclSend/ncclRecv", type));
  }
}

// ncclRedOpCreatePreMulSum: every rank's input times its own scalar (rank + 2), summed, for
// all-reduce, reduce and reduce-scatter at every datatype. With ncclScalarHostImmediate the
// scalar is copied at creation; with ncclScalarDevice it is read when each call runs (on host
// buffers, by the CPU then), so a change after creation shows.
void checkPreMulSum(ncclComm_t comm, int rank, int size) {
  const size_t count = 100;
  const size_t ranks = static_cast<size_t>(size);
  auto input = [](size_t i) { return static_cast<long long>(i % 3) + 1; };
  for (ncclDataType_t type : kReduced) {
    for (ncclScalarResidence_t residence : {ncclScalarHostImmediate, ncclScalarDevice}) {
      Buffer scalar = make(1, type);
      // A device-resident scalar is set only after creation: a copy made at creation would be 0.
      put(scalar.data(), 0, type, residence == ncclScalarDevice ? 0 : rank + 2);
      ncclRedOp_t op = ncclSum;
      mustSucceed(ncclRedOpCreatePreMulSum(&op, scalar.data(), type, residence, comm),
                  "ncclRedOpCreatePreMulSum", comm);
      expectEqual("a premultiplied sum's op is past the built-in ones", op >= ncclNumOps, 1);
      put(scalar.data(), 0, type, rank + 2);
      long long factor = 0;
      for (int r = 0; r < size; ++r) factor += r + 2;
      Buffer send = make(count * ranks, type), recv = make(count * ranks, type),
             want = make(count * ranks, type);
      for (size_t i = 0; i < count * ranks; ++i) {
        put(send.data(), i, type, input(i));
        put(want.data(), i, type, factor * input(i));
      }
      const std::string what = label("premultiplied sum", type, static_cast<int>(residence));
      mustSucceed(ncclAllReduce(send.data(), recv.data(), count, type, op, comm, nullptr),
                  "ncclAllReduce with a premultiplied sum", comm);
      expectSame(recv, want, count, type, what + " ncclAllReduce");
      mustSucceed(ncclReduce(send.data(), recv.data(), count, type, op, 0, comm, nullptr),
                  "ncclReduce with a premultiplied sum", comm);
      if (rank == 0) expectSame(recv, want, count, type, what + " ncclReduce");
      mustSucceed(ncclReduceScatter(send.data(), recv.data(), count, type, op, comm, nullptr),
                  "ncclReduceScatter with a premultiplied sum", comm);
      Buffer wantBlock = make(count, type);
      for (size_t i = 0; i < count; ++i) {
        put(wantBlock.data(), i, type, factor * input(static_cast<size_t>(rank) * count + i));
      }
      expectSame(recv, wantBlock, count, type, what + " ncclReduceScatter");
      mustSucceed(ncclRedOpDestroy(op, comm), "ncclRedOpDestroy", comm);
    }
  }
}

// ---- Other ways to make and use communicators. ----

// The rank's 32-bit sum over comm (ranks' values given by `value`), checked.
void expectIntSum(ncclComm_t comm, int value, int expected, const char* what) {
  int32_t in = value, out = 0;
  mustSucceed(ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, nullptr), what, comm);
  expectEqual(what, out, expected);
}

// Ranks with the same color (rank % 2) in a new communicator, ordered by key (-rank: reversed).
void checkSplit(ncclComm_t comm, int rank, int size) {
  ncclComm_t half = nullptr;
  mustSucceed(ncclCommSplit(comm, rank % 2, -rank, &half, nullptr), "ncclCommSplit", comm);
  int members = 0, newRank = -1, expectedSize = 0, expectedRank = 0, expectedSum = 0;
  for (int r = 0; r < size; ++r) {
    if (r % 2 != rank % 2) continue;
    ++expectedSize;
    expectedSum += r;
    if (r > rank) ++expectedRank;
  }
  mustSucceed(ncclCommCount(half, &members), "ncclCommCount of the split", half);
  mustSucceed(ncclCommUserRank(half, &newRank), "ncclCommUserRank of the split", half);
  expectEqual("split size", members, expectedSize);
  expectEqual("split rank (keys reverse the order)", newRank, expectedRank);
  expectIntSum(half, rank, expectedSum, "allreduce over the split");
  mustSucceed(ncclCommDestroy(half), "ncclCommDestroy of the split");
  // NCCL_SPLIT_NOCOLOR on odd ranks: they join nothing.
  ncclComm_t evens = nullptr;
  mustSucceed(ncclCommSplit(comm, rank % 2 == 0 ? 0 : NCCL_SPLIT_NOCOLOR, rank, &evens, nullptr),
              "ncclCommSplit with NCCL_SPLIT_NOCOLOR", comm);
  expectEqual("NCCL_SPLIT_NOCOLOR gives NULL", evens == nullptr, rank % 2 != 0);
  if (evens != nullptr) {
    int evenSum = 0;
    for (int r = 0; r < size; r += 2) evenSum += r;
    expectIntSum(evens, rank, evenSum, "allreduce over the even ranks");
    mustSucceed(ncclCommDestroy(evens), "ncclCommDestroy of the even ranks");
  }
}

// The ranks other than the last shrink the communicator.
void checkShrink(ncclComm_t comm, int rank, int size) {
  if (rank == size - 1) return;
  int excluded = size - 1;
  ncclComm_t smaller = nullptr;
  mustSucceed(ncclCommShrink(comm, &excluded, 1, &smaller, nullptr, NCCL_SHRINK_DEFAULT),
              "ncclCommShrink", comm);
  int members = 0;
  mustSucceed(ncclCommCount(smaller, &members), "ncclCommCount of the shrunk", smaller);
  expectEqual("shrunk size", members, size - 1);
  expectIntSum(smaller, 1, size - 1, "allreduce over the shrunk communicator");
  mustSucceed(ncclCommDestroy(smaller), "ncclCommDestroy of the shrunk");
}

// A non-blocking communicator: calls answer ncclInProgress, ncclCommGetAsyncError says when done.
void checkNonBlocking(const ncclUniqueId& id, int rank, int size) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.commName = "conformance-nonblocking";
  ncclComm_t comm = nullptr;
  ncclResult_t state = ncclCommInitRankConfig(&comm, size, id, rank, &config);
  ++checks;
  if (state != ncclSuccess && state != ncclInProgress) mustSucceed(state, "non-blocking init");
  auto settle = [&](const char* what) {
    ncclResult_t async = ncclInProgress;
    ncclResult_t asked = ncclSuccess;
    while (asked == ncclSuccess && async == ncclInProgress) {
      asked = ncclCommGetAsyncError(comm, &async);
    }
    mustSucceed(asked, "ncclCommGetAsyncError", comm);
    mustSucceed(async, what, comm);
  };
  settle("non-blocking init");
  int32_t in = rank + 1, out = 0;
  state = ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, nullptr);
  if (state != ncclSuccess && state != ncclInProgress) mustSucceed(state, "non-blocking allreduce");
  settle("non-blocking allreduce");
  expectEqual("non-blocking allreduce", out, size * (size + 1) / 2);
  mustSucceed(ncclCommDestroy(comm), "ncclCommDestroy of the non-blocking communicator");
}

// A ring shift between buffers registered with ncclCommRegister, which hoop passes to its own
// registration: over RDMA, pieces larger than a slot then go straight between the two buffers
// (the guest's RDMA suite checks that from the log); elsewhere the results are the same.
void checkRegistered(ncclComm_t comm, int rank, int size) {
  const size_t count = (3 << 20) / 4 + 1001;  // several RDMA slots, not a whole number of pages
  const int next = (rank + 1) % size;
  const int prev = (rank + size - 1) % size;
  std::vector<int32_t> send(count), recv(count);
  for (size_t i = 0; i < count; ++i)
    send[i] = static_cast<int32_t>(i * 7 + static_cast<size_t>(rank));
  void* sendHandle = nullptr;
  void* recvHandle = nullptr;
  void* emptyHandle = nullptr;
  mustSucceed(ncclCommRegister(comm, send.data(), count * 4, &sendHandle), "ncclCommRegister",
              comm);
  mustSucceed(ncclCommRegister(comm, recv.data(), count * 4, &recvHandle), "ncclCommRegister",
              comm);
  mustSucceed(ncclCommRegister(comm, recv.data(), 0, &emptyHandle),
              "ncclCommRegister of an empty buffer", comm);
  for (int round = 0; round < 3; ++round) {
    std::fill(recv.begin(), recv.end(), -1);
    mustSucceed(ncclGroupStart(), "ncclGroupStart");
    mustSucceed(ncclSend(send.data(), count, ncclInt32, next, comm, nullptr), "registered send",
                comm);
    mustSucceed(ncclRecv(recv.data(), count, ncclInt32, prev, comm, nullptr), "registered recv",
                comm);
    mustSucceed(ncclGroupEnd(), "ncclGroupEnd of the registered ring shift", comm);
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) {
      if (recv[i] != static_cast<int32_t>(i * 7 + static_cast<size_t>(prev))) ++wrong;
    }
    expectEqual("wrong elements in the registered ring shift", wrong, 0);
  }
  mustSucceed(ncclCommDeregister(comm, emptyHandle), "ncclCommDeregister of the empty buffer",
              comm);
  mustSucceed(ncclCommDeregister(comm, sendHandle), "ncclCommDeregister", comm);
  mustSucceed(ncclCommDeregister(comm, recvHandle), "ncclCommDeregister", comm);
  expectEqual("ncclCommDeregister of a handle deregistered already",
              ncclCommDeregister(comm, recvHandle), ncclInvalidArgument);
}

// ---- Running as one rank of a hooprun job. ----

int envInt(const char* name) {
  const char* value = getenv(name);
  if (value == nullptr) {
    std::printf("FAILED: %s is not set: run under hooprun (or use --clique)\n", name);
    std::exit(2);
  }
  return atoi(value);
}

// Rank 0's unique id for `purpose`, through a file only this job's ranks can name.
ncclUniqueId shareId(const std::string& dir, const char* purpose, int rank) {
  const char* secret = getenv("HOOP_SECRET");
  const std::string path =
      dir + "/nccl-conformance-" + (secret != nullptr ? secret : "nosecret") + "-" + purpose;
  ncclUniqueId id;
  if (rank == 0) {
    mustSucceed(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const std::string partial = path + ".partial";
    std::ofstream(partial, std::ios::binary).write(id.internal, sizeof(id.internal));
    rename(partial.c_str(), path.c_str());
    return id;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path, std::ios::binary);
    if (in.read(id.internal, sizeof(id.internal))) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::printf("[rank %d] FAILED: no unique id in %s after 60 s\n", rank, path.c_str());
  std::exit(1);
}

int runRank(const std::string& idDir, bool registeredOnly) {
  const int rank = envInt("HOOP_RANK");
  const int size = envInt("HOOP_SIZE");
  myRank = rank;
  const ncclUniqueId id = shareId(idDir, "world", rank);
  const ncclUniqueId nonBlockingId =
      registeredOnly ? ncclUniqueId{} : shareId(idDir, "nonblocking", rank);

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "conformance";
  ncclComm_t comm = nullptr;
  mustSucceed(ncclCommInitRankConfig(&comm, size, id, rank, &config), "ncclCommInitRankConfig");
  int count = 0, user = -1;
  mustSucceed(ncclCommCount(comm, &count), "ncclCommCount", comm);
  mustSucceed(ncclCommUserRank(comm, &user), "ncclCommUserRank", comm);
  expectEqual("ncclCommCount", count, size);
  expectEqual("ncclCommUserRank", user, rank);

  if (!registeredOnly) {
    runCollectives(comm, rank, size);
    checkPreMulSum(comm, rank, size);
    checkSplit(comm, rank, size);
    checkNonBlocking(nonBlockingId, rank, size);
  }
  checkRegistered(comm, rank, size);
  if (!registeredOnly) checkShrink(comm, rank, size);
  ncclResult_t async = ncclInternalError;
  mustSucceed(ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError", comm);
  expectEqual("async error at the end", async, ncclSuccess);
  mustSucceed(ncclCommFinalize(comm), "ncclCommFinalize", comm);
  mustSucceed(ncclCommDestroy(comm), "ncclCommDestroy");
  if (rank == 0) {
    const char* secret = getenv("HOOP_SECRET");
    for (const char* purpose : {"world", "nonblocking"}) {
      unlink(
          (idDir + "/nccl-conformance-" + (secret != nullptr ? secret : "nosecret") + "-" + purpose)
              .c_str());
    }
  }
  if (failures != 0) {
    std::printf("[rank %d] FAILED: %d of %d checks\n", rank, failures, checks);
    return 1;
  }
  std::printf("OK rank %d of %d: %d checks\n", rank, size, checks);
  return 0;
}

// ---- One process: a clique from ncclCommInitAll, and communicators made in one group. ----

// Every communicator's share of an allreduce and a ring exchange, grouped in this one thread.
void exchangeInOneThread(const std::vector<ncclComm_t>& comms, const char* what) {
  const int n = static_cast<int>(comms.size());
  std::vector<int32_t> in(comms.size()), out(comms.size()), received(comms.size());
  mustSucceed(ncclGroupStart(), "ncclGroupStart");
  for (int i = 0; i < n; ++i) {
    in[static_cast<size_t>(i)] = 10 + i;
    mustSucceed(ncclAllReduce(&in[static_cast<size_t>(i)], &out[static_cast<size_t>(i)], 1,
                              ncclInt32, ncclSum, comms[static_cast<size_t>(i)], nullptr),
                what);
    mustSucceed(ncclSend(&in[static_cast<size_t>(i)], 1, ncclInt32, (i + 1) % n,
                         comms[static_cast<size_t>(i)], nullptr),
                what);
    mustSucceed(ncclRecv(&received[static_cast<size_t>(i)], 1, ncclInt32, (i + n - 1) % n,
                         comms[static_cast<size_t>(i)], nullptr),
                what);
  }
  mustSucceed(ncclGroupEnd(), what);
  for (int i = 0; i < n; ++i) {
    expectEqual(what, out[static_cast<size_t>(i)], 10 * n + n * (n - 1) / 2);
    expectEqual(what, received[static_cast<size_t>(i)], 10 + (i + n - 1) % n);
  }
}

int runClique(int n) {
  myRank = 0;
  std::vector<ncclComm_t> comms(static_cast<size_t>(n), nullptr);
  std::vector<int> devices(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) devices[static_cast<size_t>(i)] = n - 1 - i;
  mustSucceed(ncclCommInitAll(comms.data(), n, devices.data()), "ncclCommInitAll");
  for (int i = 0; i < n; ++i) {
    int rank = -1, device = -1;
    mustSucceed(ncclCommUserRank(comms[static_cast<size_t>(i)], &rank), "ncclCommUserRank");
    mustSucceed(ncclCommCuDevice(comms[static_cast<size_t>(i)], &device), "ncclCommCuDevice");
    expectEqual("ncclCommInitAll rank", rank, i);
    expectEqual("ncclCommInitAll device (from devlist)", device, n - 1 - i);
  }
  exchangeInOneThread(comms, "a group over ncclCommInitAll's communicators");
  for (ncclComm_t comm : comms) mustSucceed(ncclCommDestroy(comm), "ncclCommDestroy");

  // Several ranks made by one thread inside one group, as nccl-tests does with -g.
  ncclUniqueId id;
  mustSucceed(ncclGetUniqueId(&id), "ncclGetUniqueId");
  mustSucceed(ncclGroupStart(), "ncclGroupStart");
  for (int i = 0; i < n; ++i) {
    mustSucceed(ncclCommInitRank(&comms[static_cast<size_t>(i)], n, id, i), "grouped init");
  }
  mustSucceed(ncclGroupEnd(), "ncclGroupEnd of the grouped init");
  exchangeInOneThread(comms, "a group over communicators made in one group");
  for (ncclComm_t comm : comms) mustSucceed(ncclCommDestroy(comm), "ncclCommDestroy");

  if (failures != 0) {
    std::printf("FAILED: %d of %d checks\n", failures, checks);
    return 1;
  }
  std::printf("OK clique of %d: %d checks\n", n, checks);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string library, forbidden, idDir = "/tmp";
  int clique = 0;
  bool registeredOnly = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool hasValue = i + 1 < argc;
    if (arg == "--library" && hasValue) {
      library = argv[++i];
    } else if (arg == "--not-library" && hasValue) {
      forbidden = argv[++i];
    } else if (arg == "--id-dir" && hasValue) {
      idDir = argv[++i];
    } else if (arg == "--clique" && hasValue) {
      clique = atoi(argv[++i]);
    } else if (arg == "--registered-only") {
      registeredOnly = true;
    } else {
      std::printf(
          "usage: %s --library PATH [--not-library PATH] [--id-dir DIR] [--clique N] "
          "[--registered-only]\n",
          argv[0]);
      return 2;
    }
  }
  if (library.empty()) {
    std::printf("FAILED: --library (hoop's libnccl.so.2) is required\n");
    return 2;
  }
  if (clique == 0) myRank = envInt("HOOP_RANK");
#ifdef NCCL_HOOP
  const char* header = "hoop's nccl.h";
#else
  const char* header = "NCCL's nccl.h";
#endif
  int version = 0;
  mustSucceed(ncclGetVersion(&version), "ncclGetVersion");
  expectEqual("ncclGetVersion", version, 22809);
  checkAbi();
  checkLibrary(library, forbidden);
  if (failures != 0) {
    std::printf("[rank %d] FAILED: %d of %d checks, before any communication\n", myRank, failures,
                checks);
    return 1;
  }
  if (myRank <= 0) std::printf("built against %s, running on %s\n", header, library.c_str());
  return clique > 0 ? runClique(clique) : runRank(idDir, registeredOnly);
}
