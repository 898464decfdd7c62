#include "graph_capture.h"

#include <string>

#include "base/error.h"
#include "device/emulated/emulated_graph.h"

#if HOOP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace hoop::test {
namespace {

class EmulatedCapture final : public CapturedGraph {
 public:
  explicit EmulatedCapture(std::unique_ptr<emulated::EmulatedGraph> graph)
      : graph_(std::move(graph)) {}
  void launch(DeviceStream stream) override { emulated::launchGraph(*graph_, stream); }

 private:
  std::unique_ptr<emulated::EmulatedGraph> graph_;
};

#if HOOP_HAVE_CUDA
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    fail(hoopUnhandledCudaError, what, ": ", cudaGetErrorName(status), " (",
         cudaGetErrorString(status), ")");
  }
}

class CudaCapture final : public CapturedGraph {
 public:
  explicit CudaCapture(cudaGraph_t graph) : graph_(graph) {
    check(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate");
  }
  ~CudaCapture() override {
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
  }
  void launch(DeviceStream stream) override {
    check(cudaGraphLaunch(exec_, static_cast<cudaStream_t>(stream)), "cudaGraphLaunch");
  }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};
#endif

}  // namespace

void beginCapture(DeviceStream stream) {
  if (deviceEmulated()) {
    emulated::beginCapture(stream);
    return;
  }
#if HOOP_HAVE_CUDA
  check(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeGlobal),
        "cudaStreamBeginCapture");
#else
  fail(hoopInvalidUsage, "graph capture needs CUDA or HOOP_DEVICE_EMULATION=1");
#endif
}

std::unique_ptr<CapturedGraph> endCapture(DeviceStream stream) {
  if (deviceEmulated()) return std::make_unique<EmulatedCapture>(emulated::endCapture(stream));
#if HOOP_HAVE_CUDA
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph), "cudaStreamEndCapture");
  return std::make_unique<CudaCapture>(graph);
#else
  fail(hoopInvalidUsage, "graph capture needs CUDA or HOOP_DEVICE_EMULATION=1");
#endif
}

}  // namespace hoop::test
