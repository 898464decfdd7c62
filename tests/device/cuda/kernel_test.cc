// The CUDA element-wise kernels against the CPU portable kernels (src/device/cpu), which define
// the results: every dtype x op, every count 0..257, pointers at several offsets (together and
// apart modulo 16, so head, vector body and tail all run, and the all-scalar path too), in place
// and out of place, one and two outputs. Compared bit for bit, including guard bytes around every
// output so a write out of bounds fails the test. Integer-valued inputs first; then random bit
// patterns (NaN payloads, infinities, signed zeros, subnormals) for the NaN and zero rules.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/half.h"
#include "base/types.h"
#include "device/cpu/reduce.h"
#include "device/cpu/scale.h"
#include "device/cuda/kernels.h"
#include "gpu_test_util.h"

namespace hoop {
namespace {

using gpu_test::DeviceBuffer;
using Bytes = std::vector<uint8_t>;

constexpr DataType kAllTypes[] = {DataType::kInt8,    DataType::kUint8,   DataType::kInt32,
                                  DataType::kUint32,  DataType::kInt64,   DataType::kUint64,
                                  DataType::kFloat16, DataType::kFloat32, DataType::kFloat64,
                                  DataType::kBfloat16};
constexpr DataType kFloatTypes[] = {DataType::kFloat16, DataType::kFloat32, DataType::kFloat64,
                                    DataType::kBfloat16};
constexpr RedOp kAllOps[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kAvg};

constexpr size_t kGuardBytes = 64;
constexpr uint8_t kGuard = 0xa5;
constexpr size_t kArenaBytes = size_t{64} << 20;

// Offsets in elements of out1, out2, a, b from a 16-byte-aligned base.
struct Layout {
  size_t out1, out2, a, b;
};
constexpr Layout kLayouts[] = {
    {0, 0, 0, 0},                // all aligned: vectors from the first element
    {1, 1, 1, 1},                // together, off by one element: scalar head, then vectors
    {3, 3, 3, 3}, {0, 1, 2, 3},  // apart: element by element
    {1, 0, 1, 0},
};

std::string describe(DataType type, RedOp op, size_t count, const Layout& l, bool out2,
                     size_t divisor) {
  return std::string(dataTypeName(type)) + " " + std::string(redOpName(op)) + " count " +
         std::to_string(count) + " offsets out1 " + std::to_string(l.out1) + " out2 " +
         (out2 ? std::to_string(l.out2) : "none") + " a " + std::to_string(l.a) + " b " +
         std::to_string(l.b) + " divisor " + std::to_string(divisor);
}

// One element of `type` holding the integer v (small, so exact in every type).
void putInteger(DataType type, uint8_t* at, int v) {
  switch (type) {
    case DataType::kFloat16: {
      const uint16_t h = floatToHalf(static_cast<float>(v));
      std::memcpy(at, &h, 2);
      return;
    }
    case DataType::kBfloat16: {
      const uint16_t h = floatToBf16(static_cast<float>(v));
      std::memcpy(at, &h, 2);
      return;
    }
    case DataType::kFloat32: {
      const auto f = static_cast<float>(v);
      std::memcpy(at, &f, 4);
      return;
    }
    case DataType::kFloat64: {
      const auto d = static_cast<double>(v);
      std::memcpy(at, &d, 8);
      return;
    }
    default: {
      const auto wide = static_cast<int64_t>(v);  // little-endian: the low bytes are the value
      std::memcpy(at, &wide, dataTypeSize(type));
      return;
    }
  }
}

// Integer-valued inputs: integers anywhere in their range, floats in [-15, 15].
Bytes integerInputs(DataType type, size_t count, std::mt19937_64& rng) {
  const size_t size = dataTypeSize(type);
  Bytes out(count * size);
  if (!isFloatingPoint(type)) {
    for (auto& b : out) b = static_cast<uint8_t>(rng());
    return out;
  }
  std::uniform_int_distribution<int> value(-15, 15);
  for (size_t i = 0; i < count; ++i) putInteger(type, out.data() + i * size, value(rng));
  return out;
}

// Random bit patterns, a quarter of them special: NaNs with payloads, infinities, zeros,
// subnormals.
Bytes anyBitsInputs(DataType type, size_t count, std::mt19937_64& rng) {
  const size_t size = dataTypeSize(type);
  Bytes out(count * size);
  for (size_t i = 0; i < count; ++i) {
    uint64_t bits = rng();
    const uint64_t pick = rng() % 8;
    const int exponentShift = type == DataType::kFloat16    ? 10
                              : type == DataType::kBfloat16 ? 7
                              : type == DataType::kFloat32  ? 23
                                                            : 52;
    const uint64_t expMask = (size == 2   ? (type == DataType::kFloat16 ? 0x1fu : 0xffu)
                              : size == 4 ? 0xffu
                                          : 0x7ffu)
                             << exponentShift;
    if (pick == 0) bits |= expMask;                        // NaN or infinity
    if (pick == 1) bits = (bits & ~expMask) | expMask;     // same, payload kept
    if (pick == 2) bits &= ~expMask;                       // zero or subnormal
    if (pick == 3) bits &= uint64_t{1} << (size * 8 - 1);  // a signed zero
    std::memcpy(out.data() + i * size, &bits, size);
  }
  return out;
}

class CudaKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HOOP_SKIP_WITHOUT_GPU();
    HOOP_CUDA_ASSERT(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (auto& arena : arenas_) arena = std::make_unique<DeviceBuffer>(kArenaBytes);
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // The four arenas hold out1, out2, a, b; each region starts kGuardBytes after its arena base.
  char* region(int which, size_t offsetBytes) const {
    return arenas_[which]->data() + kGuardBytes + offsetBytes;
  }

  // Runs one reduceCopyFinal case on the GPU and on the CPU and compares every byte of both
  // output arenas over the region plus guards. `inPlace`: out1 is a's region, out2 b's.
  void checkReduce(DataType type, RedOp op, const Bytes& a, const Bytes& b, const Layout& l,
                   bool withOut2, bool inPlace, size_t divisor) {
    const size_t size = dataTypeSize(type);
    const size_t count = a.size() / size;
    const size_t span = kGuardBytes + (count + 4) * size + kGuardBytes;
    const std::string what =
        describe(type, op, count, l, withOut2, divisor) + (inPlace ? " in place" : "");

    // Host images of the four arenas' first `span` bytes.
    std::vector<Bytes> image(4, Bytes(span, kGuard));
    std::memcpy(image[2].data() + kGuardBytes + l.a * size, a.data(), a.size());
    std::memcpy(image[3].data() + kGuardBytes + l.b * size, b.data(), b.size());
    for (int i = 0; i < 4; ++i) {
      HOOP_CUDA_ASSERT(
          cudaMemcpy(arenas_[i]->data(), image[i].data(), span, cudaMemcpyHostToDevice));
    }

    // Where each operand lives, in the images and on the device.
    const int out1Arena = inPlace ? 2 : 0;
    const int out2Arena = inPlace ? 3 : 1;
    const size_t out1Offset = (inPlace ? l.a : l.out1) * size;
    const size_t out2Offset = (inPlace ? l.b : l.out2) * size;
    uint8_t* hostOut1 = image[out1Arena].data() + kGuardBytes + out1Offset;
    uint8_t* hostOut2 = withOut2 ? image[out2Arena].data() + kGuardBytes + out2Offset : nullptr;
    reduceCopyFinalAt(CpuIsa::kPortable, hostOut1, hostOut2,
                      image[2].data() + kGuardBytes + l.a * size,
                      image[3].data() + kGuardBytes + l.b * size, count, type, op, divisor);

    try {
      cuda::reduceCopyFinalAsync(
          region(out1Arena, out1Offset), withOut2 ? region(out2Arena, out2Offset) : nullptr,
          region(2, l.a * size), region(3, l.b * size), count, type, op, divisor, stream_);
    } catch (const std::exception& e) {
      FAIL() << what << ": " << e.what();
    }
    HOOP_CUDA_ASSERT(cudaStreamSynchronize(stream_));
    for (int i = 0; i < 4; ++i) {
      Bytes got(span);
      HOOP_CUDA_ASSERT(cudaMemcpy(got.data(), arenas_[i]->data(), span, cudaMemcpyDeviceToHost));
      if (got == image[i]) continue;
      size_t j = 0;
      while (got[j] == image[i][j]) ++j;
      FAIL() << what << ": arena " << i << " byte " << j << " is 0x" << std::hex << int{got[j]}
             << ", expected 0x" << int{image[i][j]} << std::dec << " (byte "
             << static_cast<long>(j) - static_cast<long>(kGuardBytes)
             << " from the region base, elements of " << size << " bytes)";
    }
  }

  cudaStream_t stream_ = nullptr;
  std::unique_ptr<DeviceBuffer> arenas_[4];
};

TEST_F(CudaKernelTest, EveryTypeOpCountAndOffsetMatchesTheCpu) {
  std::mt19937_64 rng(1);
  for (DataType type : kAllTypes) {
    for (RedOp op : kAllOps) {
      for (size_t count = 0; count <= 257; ++count) {
        for (size_t li = 0; li < std::size(kLayouts); ++li) {
          const Bytes a = integerInputs(type, count, rng);
          const Bytes b = integerInputs(type, count, rng);
          const bool withOut2 = (count + li) % 2 == 1;
          const size_t divisor = count % 7 == 0 ? 1 : 3;
          checkReduce(type, op, a, b, kLayouts[li], withOut2, false, divisor);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_F(CudaKernelTest, InPlaceMatchesTheCpu) {
  std::mt19937_64 rng(2);
  for (DataType type : kAllTypes) {
    for (RedOp op : kAllOps) {
      for (size_t count = 0; count <= 257; count += 1 + count / 16) {
        for (const Layout& l : {kLayouts[0], kLayouts[1], kLayouts[3]}) {
          const Bytes a = integerInputs(type, count, rng);
          const Bytes b = integerInputs(type, count, rng);
          checkReduce(type, op, a, b, l, count % 2 == 0, true, 5);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_F(CudaKernelTest, SpecialValuesFollowTheCpuNaNAndZeroRules) {
  std::mt19937_64 rng(3);
  for (DataType type : kFloatTypes) {
    for (RedOp op : kAllOps) {
      for (const Layout& l : {kLayouts[0], kLayouts[1], kLayouts[3]}) {
        const Bytes a = anyBitsInputs(type, 4099, rng);
        const Bytes b = anyBitsInputs(type, 4099, rng);
        checkReduce(type, op, a, b, l, true, false, 7);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Counts past one grid's worth of threads, so every thread goes round the grid-stride loop.
TEST_F(CudaKernelTest, LargeCountsGoRoundTheGrid) {
  std::mt19937_64 rng(4);
  const size_t count = (size_t{3} << 20) + 5;
  for (auto [type, op] :
       {std::pair{DataType::kFloat32, RedOp::kSum}, std::pair{DataType::kBfloat16, RedOp::kSum},
        std::pair{DataType::kInt8, RedOp::kMax}, std::pair{DataType::kFloat64, RedOp::kAvg}}) {
    const Bytes a = integerInputs(type, count, rng);
    const Bytes b = integerInputs(type, count, rng);
    checkReduce(type, op, a, b, kLayouts[1], true, false, 3);
    if (HasFatalFailure()) return;
  }
}

TEST_F(CudaKernelTest, FinishAverageMatchesTheCpu) {
  std::mt19937_64 rng(5);
  for (DataType type : kAllTypes) {
    for (auto [op, divisor] : {std::pair{RedOp::kAvg, size_t{3}}, std::pair{RedOp::kAvg, size_t{1}},
                               std::pair{RedOp::kSum, size_t{3}}}) {
      for (size_t count = 0; count <= 257; ++count) {
        for (auto [outOffset, inOffset] : {std::pair{0, 0}, std::pair{1, 1}, std::pair{0, 1}}) {
          const size_t size = dataTypeSize(type);
          const size_t span = kGuardBytes + (count + 4) * size + kGuardBytes;
          const Bytes in = integerInputs(type, count, rng);
          Bytes inImage(span, kGuard);
          Bytes outImage(span, kGuard);
          std::memcpy(inImage.data() + kGuardBytes + inOffset * size, in.data(), in.size());
          HOOP_CUDA_ASSERT(
              cudaMemcpy(arenas_[0]->data(), outImage.data(), span, cudaMemcpyHostToDevice));
          HOOP_CUDA_ASSERT(
              cudaMemcpy(arenas_[2]->data(), inImage.data(), span, cudaMemcpyHostToDevice));
          finishAverageAt(CpuIsa::kPortable, outImage.data() + kGuardBytes + outOffset * size,
                          inImage.data() + kGuardBytes + inOffset * size, count, type, op, divisor);
          cuda::finishAverageAsync(region(0, outOffset * size), region(2, inOffset * size), count,
                                   type, op, divisor, stream_);
          HOOP_CUDA_ASSERT(cudaStreamSynchronize(stream_));
          Bytes got(span);
          HOOP_CUDA_ASSERT(
              cudaMemcpy(got.data(), arenas_[0]->data(), span, cudaMemcpyDeviceToHost));
          ASSERT_EQ(got, outImage)
              << dataTypeName(type) << " " << redOpName(op) << " divisor " << divisor << " count "
              << count << " offsets " << outOffset << "/" << inOffset;
        }
      }
    }
  }
}

// A premultiplied sum's scale: every type, counts 0..257 and past the grid, in place and not,
// the factor by value and read from device memory; float types also on any bits (NaN payloads,
// infinities, signed zeros) in the inputs and the factor.
TEST_F(CudaKernelTest, ScaleMatchesTheCpu) {
  std::mt19937_64 rng(8);
  for (DataType type : kAllTypes) {
    const size_t size = dataTypeSize(type);
    for (size_t count :
         {size_t{0}, size_t{1}, size_t{15}, size_t{17}, size_t{257}, (size_t{3} << 20) + 5}) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool inPlace = variant % 2 == 1;
        const bool factorOnDevice = variant >= 2;
        const bool anyBits = isFloatingPoint(type) && count < 1000 && variant == 3;
        const Bytes in =
            anyBits ? anyBitsInputs(type, count, rng) : integerInputs(type, count, rng);
        const Bytes factor = anyBits ? anyBitsInputs(type, 1, rng) : integerInputs(type, 1, rng);
        const size_t span = kGuardBytes + (count + 1) * size + kGuardBytes;
        Bytes inImage(span, kGuard);
        Bytes outImage(span, kGuard);
        std::memcpy(inImage.data() + kGuardBytes + size, in.data(), in.size());
        HOOP_CUDA_ASSERT(
            cudaMemcpy(arenas_[0]->data(), outImage.data(), span, cudaMemcpyHostToDevice));
        HOOP_CUDA_ASSERT(
            cudaMemcpy(arenas_[2]->data(), inImage.data(), span, cudaMemcpyHostToDevice));
        HOOP_CUDA_ASSERT(cudaMemcpy(region(3, 0), factor.data(), size, cudaMemcpyHostToDevice));
        Bytes& expected = inPlace ? inImage : outImage;
        scale(expected.data() + kGuardBytes + size, inImage.data() + kGuardBytes + size, count,
              type, factor.data());
        char* out = region(inPlace ? 2 : 0, size);
        cuda::scaleAsync(out, region(2, size), count, type, factorOnDevice ? region(3, 0) : nullptr,
                         factor.data(), stream_);
        HOOP_CUDA_ASSERT(cudaStreamSynchronize(stream_));
        Bytes got(span);
        HOOP_CUDA_ASSERT(
            cudaMemcpy(got.data(), arenas_[inPlace ? 2 : 0]->data(), span, cudaMemcpyDeviceToHost));
        ASSERT_EQ(got, expected) << dataTypeName(type) << " count " << count << " variant "
                                 << variant;
      }
    }
  }
}

TEST_F(CudaKernelTest, CopyMovesExactlyTheBytes) {
  std::mt19937_64 rng(6);
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{255},
                       size_t{4096}, size_t{1} << 20, (size_t{1} << 20) + 3}) {
    for (size_t dstOffset = 0; dstOffset < 4; ++dstOffset) {
      for (size_t srcOffset = 0; srcOffset < 4; ++srcOffset) {
        const size_t span = kGuardBytes + bytes + 4 + kGuardBytes;
        Bytes src(span);
        for (auto& b : src) b = static_cast<uint8_t>(rng());
        Bytes dst(span, kGuard);
        HOOP_CUDA_ASSERT(cudaMemcpy(arenas_[0]->data(), dst.data(), span, cudaMemcpyHostToDevice));
        HOOP_CUDA_ASSERT(cudaMemcpy(arenas_[2]->data(), src.data(), span, cudaMemcpyHostToDevice));
        std::memcpy(dst.data() + kGuardBytes + dstOffset, src.data() + kGuardBytes + srcOffset,
                    bytes);
        cuda::copyAsync(region(0, dstOffset), region(2, srcOffset), bytes, stream_);
        HOOP_CUDA_ASSERT(cudaStreamSynchronize(stream_));
        Bytes got(span);
        HOOP_CUDA_ASSERT(cudaMemcpy(got.data(), arenas_[0]->data(), span, cudaMemcpyDeviceToHost));
        ASSERT_EQ(got, dst) << bytes << " bytes, offsets " << dstOffset << "/" << srcOffset;
      }
    }
  }
}

// Stream semantics: a launch only enqueues, so it can be captured into a CUDA graph and replayed.
TEST_F(CudaKernelTest, LaunchesAreGraphCapturable) {
  const size_t count = 1000;
  std::vector<float> a(count);
  std::vector<float> b(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i + 1);
  }
  char* da = region(2, 0);
  char* db = region(3, 0);
  char* out = region(0, 0);
  HOOP_CUDA_ASSERT(cudaMemcpy(da, a.data(), count * 4, cudaMemcpyHostToDevice));
  HOOP_CUDA_ASSERT(cudaMemcpy(db, b.data(), count * 4, cudaMemcpyHostToDevice));
  HOOP_CUDA_ASSERT(cudaMemset(out, 0, count * 4));
  cudaGraph_t graph = nullptr;
  HOOP_CUDA_ASSERT(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  cuda::reduceCopyFinalAsync(out, nullptr, da, db, count, DataType::kFloat32, RedOp::kAvg, 2,
                             stream_);
  HOOP_CUDA_ASSERT(cudaStreamEndCapture(stream_, &graph));
  // Nothing ran during capture.
  std::vector<float> got(count, -1.0f);
  HOOP_CUDA_ASSERT(cudaMemcpy(got.data(), out, count * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got[7], 0.0f);
  cudaGraphExec_t exec = nullptr;
  HOOP_CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
  HOOP_CUDA_ASSERT(cudaGraphLaunch(exec, stream_));
  HOOP_CUDA_ASSERT(cudaStreamSynchronize(stream_));
  HOOP_CUDA_ASSERT(cudaMemcpy(got.data(), out, count * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(got[i], static_cast<float>(3 * i + 1) / 2.0f) << "element " << i;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

}  // namespace
}  // namespace hoop
