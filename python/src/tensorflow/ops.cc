// The TensorFlow ops of hoop.tensorflow: names, inputs, attributes and output shapes, so that
// graphs built inside tf.function know what each collective returns. The kernels are in
// kernels.cc.
//
// Every op takes `tensor_name`, the name ranks match requests by (the node's own name when empty),
// and runs on CPU tensors of the types TensorFlow and hoop share.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"

namespace hoop::tensorflow_ops {
namespace {

using ::tensorflow::shape_inference::DimensionHandle;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

#define HOOP_TF_TYPES "{int8, uint8, int32, uint32, int64, uint64, half, bfloat16, float, double}"

// The input's shape with its first dimension unknown (how many rows arrive depends on the other
// ranks); a scalar input counts as one row of a vector.
absl::Status firstDimensionUnknown(InferenceContext* c) {
  ShapeHandle input = c->input(0);
  if (!c->RankKnown(input)) {
    c->set_output(0, c->UnknownShape());
    return absl::OkStatus();
  }
  if (c->Rank(input) == 0) {
    c->set_output(0, c->Vector(InferenceContext::kUnknownDim));
    return absl::OkStatus();
  }
  ShapeHandle output;
  TF_RETURN_IF_ERROR(c->ReplaceDim(input, 0, c->UnknownDim(), &output));
  c->set_output(0, output);
  return absl::OkStatus();
}

REGISTER_OP("HoopAllreduce")
    .Attr("T: " HOOP_TF_TYPES)
    .Attr("reduce_op: int")
    .Attr("prescale_factor: float = 1.0")
    .Attr("postscale_factor: float = 1.0")
    .Attr("tensor_name: string = ''")
    .Input("tensor: T")
    .Output("output: T")
    .SetIsStateful()
    .SetShapeFn(::tensorflow::shape_inference::UnchangedShape);

REGISTER_OP("HoopGroupedAllreduce")
    .Attr("T: " HOOP_TF_TYPES)
    .Attr("num_tensors: int >= 1")
    .Attr("reduce_op: int")
    .Attr("prescale_factor: float = 1.0")
    .Attr("postscale_factor: float = 1.0")
    .Attr("tensor_name: string = ''")
    .Input("tensors: num_tensors * T")
    .Output("outputs: num_tensors * T")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      for (int i = 0; i < c->num_inputs(); ++i) c->set_output(i, c->input(i));
      return absl::OkStatus();
    });

REGISTER_OP("HoopBroadcast")
    .Attr("T: " HOOP_TF_TYPES)
    .Attr("root_rank: int")
    .Attr("tensor_name: string = ''")
    .Input("tensor: T")
    .Output("output: T")
    .SetIsStateful()
    .SetShapeFn(::tensorflow::shape_inference::UnchangedShape);

REGISTER_OP("HoopAllgather")
    .Attr("T: " HOOP_TF_TYPES)
    .Attr("tensor_name: string = ''")
    .Input("tensor: T")
    .Output("output: T")
    .SetIsStateful()
    .SetShapeFn(firstDimensionUnknown);

// splits[j] rows go to rank j (an empty splits divides the rows evenly); received_splits says how
// many rows came from each rank.
REGISTER_OP("HoopAlltoall")
    .Attr("T: " HOOP_TF_TYPES)
    .Attr("tensor_name: string = ''")
    .Input("tensor: T")
    .Input("splits: int32")
    .Output("output: T")
    .Output("received_splits: int32")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      TF_RETURN_IF_ERROR(firstDimensionUnknown(c));
      c->set_output(1, c->Vector(InferenceContext::kUnknownDim));
      return absl::OkStatus();
    });

REGISTER_OP("HoopReducescatter")
    .Attr("T: " HOOP_TF_TYPES)
    .Attr("reduce_op: int")
    .Attr("tensor_name: string = ''")
    .Input("tensor: T")
    .Output("output: T")
    .SetIsStateful()
    .SetShapeFn(firstDimensionUnknown);

}  // namespace
}  // namespace hoop::tensorflow_ops
