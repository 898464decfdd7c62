// The CPU kernels of hoop's TensorFlow ops (ops.cc declares them). Each is an AsyncOpKernel:
// ComputeAsync allocates what it can, hands the tensors to hoop's training engine under the op's
// tensor name and returns; the engine negotiates the name with the other ranks, fuses it with
// other ready allreduces, runs it, and calls done() from its completion callback. No TensorFlow
// thread blocks while the ranks agree, so graphs with many collectives keep their inter-op
// threads free.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine_shim.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/types.h"

namespace hoop::tensorflow_ops {
namespace {

using ::tensorflow::AsyncOpKernel;
using ::tensorflow::DataType;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;

// hoop's data type numbers (hoopDataType_t); hoop.h is not included here, to keep hoop's headers
// out of a translation unit built with TensorFlow's flags.
int hoopType(DataType type) {
  switch (type) {
    case ::tensorflow::DT_INT8: return 0;
    case ::tensorflow::DT_UINT8: return 1;
    case ::tensorflow::DT_INT32: return 2;
    case ::tensorflow::DT_UINT32: return 3;
    case ::tensorflow::DT_INT64: return 4;
    case ::tensorflow::DT_UINT64: return 5;
    case ::tensorflow::DT_HALF: return 6;
    case ::tensorflow::DT_FLOAT: return 7;
    case ::tensorflow::DT_DOUBLE: return 8;
    case ::tensorflow::DT_BFLOAT16: return 9;
    default: return -1;  // the ops' type lists admit none of these
  }
}

// hoopResult_t codes as TensorFlow statuses: wrong arguments and wrong usage keep their meaning,
// everything else (a peer that died, a timeout, the network) is an internal error.
absl::Status statusOf(int code, const std::string& message) {
  switch (code) {
    case 0: return absl::OkStatus();
    case 4: return absl::InvalidArgumentError(message);
    case 5: return absl::FailedPreconditionError(message);
    case 8: return absl::DeadlineExceededError(message);
    default: return absl::InternalError(message);
  }
}

// Everything a request needs until the engine completes it; owned by the request, freed in
// finish(). Inputs are held by reference so their buffers stay alive.
struct Pending {
  OpKernelContext* context;
  AsyncOpKernel::DoneCallback done;
  std::vector<Tensor> keepAlive;
  TensorShape rowShape;  // allgather, alltoall: the shape of one row
  int64_t rowElements = 1;
};

void finish(void* pending, int code, const char* message) {
  std::unique_ptr<Pending> request(static_cast<Pending*>(pending));
  if (code != 0) request->context->SetStatus(statusOf(code, message));
  AsyncOpKernel::DoneCallback done = std::move(request->done);
  request.reset();
  done();
}

// Submits through `submit(pending)` (a shim call); on a refused submission the kernel fails at once
// with the shim's message.
template <typename Submit>
void launch(std::unique_ptr<Pending> pending, Submit&& submit) {
  Pending* raw = pending.release();
  const int code = submit(raw);
  if (code == 0) return;
  std::unique_ptr<Pending> refused(raw);
  refused->context->SetStatus(statusOf(code, hoopTfLastError()));
  AsyncOpKernel::DoneCallback done = std::move(refused->done);
  refused.reset();
  done();
}

size_t elements(const Tensor& tensor) { return static_cast<size_t>(tensor.NumElements()); }

// Output 0 with `rows` rows of the pending row shape, allocated on the engine's thread once every
// rank's count is known. counts are elements; each must be whole rows.
void* allocateRows(Pending* pending, const size_t* counts, size_t ranks, int64_t* rowsPerRank,
                   char* error, size_t capacity) {
  int64_t rows = 0;
  for (size_t r = 0; r < ranks; ++r) {
    const int64_t count = static_cast<int64_t>(counts[r]);
    const int64_t per = pending->rowElements;
    if (per == 0 ? count != 0 : count % per != 0) {
      std::snprintf(error, capacity,
                    "rank %zu sent %lld elements, which is not a whole number of rows of shape %s "
                    "(every rank's tensor must have the same shape after the first dimension)",
                    r, static_cast<long long>(count), pending->rowShape.DebugString().c_str());
      return nullptr;
    }
    const int64_t mine = per == 0 ? 0 : count / per;
    if (rowsPerRank != nullptr) rowsPerRank[r] = mine;
    rows += mine;
  }
  TensorShape shape({rows});
  shape.AppendShape(pending->rowShape);
  Tensor* output = nullptr;
  const absl::Status status = pending->context->allocate_output(0, shape, &output);
  if (!status.ok()) {
    std::snprintf(error, capacity, "allocating the output: %s",
                  std::string(status.message()).c_str());
    return nullptr;
  }
  return output->data();  // null for an empty result, which the engine accepts
}

// The tensor's shape without its first dimension, and how many elements that is.
void setRows(Pending& pending, const TensorShape& shape) {
  TensorShape row = shape;
  if (row.dims() > 0) row.RemoveDim(0);
  pending.rowElements = row.num_elements();
  pending.rowShape = row;
}

class HoopKernel : public AsyncOpKernel {
 public:
  explicit HoopKernel(OpKernelConstruction* context) : AsyncOpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("tensor_name", &tensorName_));
    if (tensorName_.empty()) tensorName_ = name();
  }

 protected:
  std::unique_ptr<Pending> pending(OpKernelContext* context, DoneCallback done) const {
    auto request = std::make_unique<Pending>();
    request->context = context;
    request->done = std::move(done);
    return request;
  }

  std::string tensorName_;
};

// The allreduces: a reduction and the factors applied before and after it.
class ScaledReduceKernel : public HoopKernel {
 public:
  explicit ScaledReduceKernel(OpKernelConstruction* context) : HoopKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("reduce_op", &op_));
    OP_REQUIRES_OK(context, context->GetAttr("prescale_factor", &prescale_));
    OP_REQUIRES_OK(context, context->GetAttr("postscale_factor", &postscale_));
  }

 protected:
  int op_ = 0;
  float prescale_ = 1.0f;
  float postscale_ = 1.0f;
};

class AllreduceKernel : public ScaledReduceKernel {
 public:
  using ScaledReduceKernel::ScaledReduceKernel;

  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    const Tensor& input = context->input(0);
    Tensor* output = nullptr;
    OP_REQUIRES_OK_ASYNC(
        context, context->forward_input_or_allocate_output({0}, 0, input.shape(), &output), done);
    auto request = pending(context, std::move(done));
    request->keepAlive.push_back(input);
    const void* send = input.tensor_data().data();
    void* recv = const_cast<char*>(output->tensor_data().data());
    launch(std::move(request), [&](Pending* p) {
      return hoopTfAllReduce(tensorName_.c_str(), send, recv, elements(input),
                             hoopType(input.dtype()), op_, prescale_, postscale_, finish, p);
    });
  }
};

class GroupedAllreduceKernel : public ScaledReduceKernel {
 public:
  using ScaledReduceKernel::ScaledReduceKernel;

  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    const int tensors = context->num_inputs();
    std::vector<std::string> names;
    std::vector<const char*> namePointers;
    std::vector<const void*> sends;
    std::vector<void*> recvs;
    std::vector<size_t> counts;
    for (int i = 0; i < tensors; ++i) {
      const Tensor& input = context->input(i);
      Tensor* output = nullptr;
      OP_REQUIRES_OK_ASYNC(
          context, context->forward_input_or_allocate_output({i}, i, input.shape(), &output), done);
      names.push_back(tensorName_ + "." + std::to_string(i));
      sends.push_back(input.tensor_data().data());
      recvs.push_back(const_cast<char*>(output->tensor_data().data()));
      counts.push_back(elements(input));
    }
    for (const std::string& n : names) namePointers.push_back(n.c_str());
    auto request = pending(context, std::move(done));
    for (int i = 0; i < tensors; ++i) request->keepAlive.push_back(context->input(i));
    const int type = hoopType(context->input(0).dtype());
    launch(std::move(request), [&](Pending* p) {
      return hoopTfGroupedAllReduce(static_cast<size_t>(tensors), namePointers.data(), sends.data(),
                                    recvs.data(), counts.data(), type, op_, prescale_, postscale_,
                                    finish, p);
    });
  }
};

class BroadcastKernel : public HoopKernel {
 public:
  explicit BroadcastKernel(OpKernelConstruction* context) : HoopKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("root_rank", &root_));
  }

  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    const Tensor& input = context->input(0);
    Tensor* output = nullptr;
    OP_REQUIRES_OK_ASYNC(
        context, context->forward_input_or_allocate_output({0}, 0, input.shape(), &output), done);
    // In place on the output: the root sends its copy of the input, the others overwrite theirs.
    void* data = const_cast<char*>(output->tensor_data().data());
    if (data != input.tensor_data().data()) {
      std::memcpy(data, input.tensor_data().data(), input.tensor_data().size());
    }
    auto request = pending(context, std::move(done));
    launch(std::move(request), [&](Pending* p) {
      return hoopTfBroadcast(tensorName_.c_str(), data, elements(input), hoopType(input.dtype()),
                             root_, finish, p);
    });
  }

 private:
  int root_ = 0;
};

class AllgatherKernel : public HoopKernel {
 public:
  using HoopKernel::HoopKernel;

  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    const Tensor& input = context->input(0);
    auto request = pending(context, std::move(done));
    request->keepAlive.push_back(input);
    setRows(*request, input.shape());
    const void* send = input.tensor_data().data();
    launch(std::move(request), [&](Pending* p) {
      return hoopTfAllGather(
          tensorName_.c_str(), send, elements(input), hoopType(input.dtype()),
          [](void* opaque, const size_t* counts, size_t senders, char* error, size_t capacity) {
            return allocateRows(static_cast<Pending*>(opaque), counts, senders, nullptr, error,
                                capacity);
          },
          finish, p);
    });
  }
};

class AlltoallKernel : public HoopKernel {
 public:
  using HoopKernel::HoopKernel;

  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    const Tensor& input = context->input(0);
    const Tensor& splits = context->input(1);
    OP_REQUIRES_ASYNC(context, input.dims() >= 1,
                      absl::InvalidArgumentError("alltoall of tensor '" + tensorName_ +
                                                 "': the tensor needs at least one dimension"),
                      done);
    const int ranks = hoopTfSize();
    OP_REQUIRES_ASYNC(context, ranks > 0,
                      absl::FailedPreconditionError(
                          "alltoall of tensor '" + tensorName_ +
                          "': hoop is not initialized; call hoop.tensorflow.init() first"),
                      done);
    const int64_t rows = input.dim_size(0);
    std::vector<int64_t> rowsTo(static_cast<size_t>(ranks));
    if (splits.NumElements() == 0) {
      OP_REQUIRES_ASYNC(context, rows % ranks == 0,
                        absl::InvalidArgumentError("alltoall of tensor '" + tensorName_ +
                                                   "': " + std::to_string(rows) +
                                                   " rows do not divide evenly among " +
                                                   std::to_string(ranks) + " ranks; pass splits"),
                        done);
      for (auto& r : rowsTo) r = rows / ranks;
    } else {
      auto given = splits.flat<int32_t>();
      int64_t total = 0;
      for (int64_t j = 0; j < given.size(); ++j) total += given(j);
      OP_REQUIRES_ASYNC(
          context, given.size() == ranks && total == rows,
          absl::InvalidArgumentError("alltoall of tensor '" + tensorName_ + "': splits has " +
                                     std::to_string(given.size()) + " entries summing to " +
                                     std::to_string(total) + "; needs " + std::to_string(ranks) +
                                     " entries summing to the " + std::to_string(rows) + " rows"),
          done);
      for (int j = 0; j < ranks; ++j) rowsTo[static_cast<size_t>(j)] = given(j);
    }
    auto request = pending(context, std::move(done));
    request->keepAlive.push_back(input);
    setRows(*request, input.shape());
    std::vector<size_t> sendCounts;
    for (int64_t r : rowsTo) sendCounts.push_back(static_cast<size_t>(r * request->rowElements));
    const void* send = input.tensor_data().data();
    launch(std::move(request), [&](Pending* p) {
      return hoopTfAllToAll(
          tensorName_.c_str(), send, sendCounts.data(), sendCounts.size(), hoopType(input.dtype()),
          [](void* opaque, const size_t* counts, size_t senders, char* error, size_t capacity) {
            auto* state = static_cast<Pending*>(opaque);
            Tensor* received = nullptr;
            const absl::Status status = state->context->allocate_output(
                1, TensorShape({static_cast<int64_t>(senders)}), &received);
            if (!status.ok()) {
              std::snprintf(error, capacity, "allocating received_splits: %s",
                            std::string(status.message()).c_str());
              return static_cast<void*>(nullptr);
            }
            std::vector<int64_t> rowsFrom(senders);
            void* out = allocateRows(state, counts, senders, rowsFrom.data(), error, capacity);
            auto flat = received->flat<int32_t>();
            for (size_t r = 0; r < senders; ++r) {
              flat(static_cast<int64_t>(r)) = static_cast<int32_t>(rowsFrom[r]);
            }
            return out;
          },
          finish, p);
    });
  }
};

class ReducescatterKernel : public HoopKernel {
 public:
  explicit ReducescatterKernel(OpKernelConstruction* context) : HoopKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("reduce_op", &op_));
  }

  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    const Tensor& input = context->input(0);
    const int ranks = hoopTfSize();
    OP_REQUIRES_ASYNC(context, ranks > 0,
                      absl::FailedPreconditionError(
                          "reducescatter of tensor '" + tensorName_ +
                          "': hoop is not initialized; call hoop.tensorflow.init() first"),
                      done);
    OP_REQUIRES_ASYNC(
        context, input.dims() >= 1 && input.dim_size(0) % ranks == 0,
        absl::InvalidArgumentError("reducescatter of tensor '" + tensorName_ + "': shape " +
                                   input.shape().DebugString() +
                                   " needs a first dimension that divides evenly among " +
                                   std::to_string(ranks) + " ranks"),
        done);
    TensorShape shape = input.shape();
    shape.set_dim(0, input.dim_size(0) / ranks);
    Tensor* output = nullptr;
    OP_REQUIRES_OK_ASYNC(context, context->allocate_output(0, shape, &output), done);
    auto request = pending(context, std::move(done));
    request->keepAlive.push_back(input);
    const void* send = input.tensor_data().data();
    void* recv = const_cast<char*>(output->tensor_data().data());
    launch(std::move(request), [&](Pending* p) {
      return hoopTfReduceScatter(tensorName_.c_str(), send, recv, elements(*output),
                                 hoopType(input.dtype()), op_, finish, p);
    });
  }

 private:
  int op_ = 0;
};

#define HOOP_TF_REGISTER(op, kernel) \
  REGISTER_KERNEL_BUILDER(Name(op).Device(::tensorflow::DEVICE_CPU), kernel)

HOOP_TF_REGISTER("HoopAllreduce", AllreduceKernel);
HOOP_TF_REGISTER("HoopGroupedAllreduce", GroupedAllreduceKernel);
HOOP_TF_REGISTER("HoopBroadcast", BroadcastKernel);
HOOP_TF_REGISTER("HoopAllgather", AllgatherKernel);
HOOP_TF_REGISTER("HoopAlltoall", AlltoallKernel);
HOOP_TF_REGISTER("HoopReducescatter", ReducescatterKernel);

}  // namespace
}  // namespace hoop::tensorflow_ops
