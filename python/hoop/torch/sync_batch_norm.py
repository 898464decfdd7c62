"""hoop.torch.SyncBatchNorm: batch normalization whose statistics cover the whole job's batch,
as horovod.torch.SyncBatchNorm.

In training each rank sums its inputs and their squares per channel; one allreduce (Sum, which is
differentiable, so the gradient flows back through the shared statistics) gives the job's sums
and element count, from which every rank normalizes with the same mean and variance. Outside
training, or on one rank, it is torch's BatchNorm.
"""

import itertools

import torch
from torch.nn.modules.batchnorm import _BatchNorm

from hoop import _runtime
from hoop.torch import mpi_ops

_layer_ids = itertools.count()


class SyncBatchNorm(_BatchNorm):
    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True
    ):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)
        # The ranks build their models alike, so the n-th layer has the same name everywhere.
        self._hoop_name = "sync_batch_norm.{}".format(next(_layer_ids))
        self._calls = itertools.count()

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(
                "hoop.torch.SyncBatchNorm: expected at least 2D input, got {}D".format(input.dim())
            )

    def forward(self, input):
        self._check_input_dim(input)
        if not self.training or _runtime.size() == 1:
            return super().forward(input)
        channels = input.shape[1]
        dims = [0] + list(range(2, input.dim()))
        count = torch.tensor([float(input.numel() // channels)], dtype=input.dtype)
        local = torch.cat([input.sum(dims), (input * input).sum(dims), count])
        name = "{}.{}".format(self._hoop_name, next(self._calls))
        total = mpi_ops.allreduce(local, name=name, op=mpi_ops.Sum)
        n = total[2 * channels]
        mean = total[:channels] / n
        var = total[channels : 2 * channels] / n - mean * mean
        if self.track_running_stats:
            with torch.no_grad():
                self.num_batches_tracked.add_(1)
                momentum = (
                    1.0 / float(self.num_batches_tracked)
                    if self.momentum is None
                    else self.momentum
                )
                unbiased = var * (n / (n - 1)) if n > 1 else var
                self.running_mean.mul_(1 - momentum).add_(mean.detach(), alpha=momentum)
                self.running_var.mul_(1 - momentum).add_(unbiased.detach(), alpha=momentum)
        shape = [1, channels] + [1] * (input.dim() - 2)
        out = (input - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            out = out * self.weight.view(shape) + self.bias.view(shape)
        return out
