"""DistributedOptimizer: averages gradients over ranks while backward() is still running.

A hook on each parameter's gradient accumulator starts an asynchronous in-place allreduce of
that gradient the moment autograd has produced it, so communication overlaps the rest of the
backward pass; step() waits for all of them before updating. Same contract as
horovod.torch.DistributedOptimizer.
"""

import contextlib
import warnings

import torch

from hoop import _runtime
from hoop.torch import mpi_ops
from hoop.torch.compression import Compression


class _DistributedOptimizer(torch.optim.Optimizer):
    def __init__(
        self,
        params,
        named_parameters,
        compression,
        backward_passes_per_step,
        op,
        gradient_predivide_factor,
    ):
        super(self.__class__, self).__init__(params)
        self._compression = compression

        if named_parameters is not None:
            named_parameters = list(named_parameters)
        else:
            named_parameters = [
                ("allreduce.noname.{}.{}".format(group_index, index), p)
                for group_index, group in enumerate(self.param_groups)
                for index, p in enumerate(group["params"])
            ]
        if any(not isinstance(p, tuple) for p in named_parameters):
            raise ValueError("named_parameters should be a sequence of (name, parameter) tuples")
        names = [name for name, _ in named_parameters]
        if len(names) != len(set(names)):
            raise ValueError("named_parameters has duplicate names")
        all_params = {id(p) for group in self.param_groups for p in group["params"]}
        named_ids = {id(p) for _, p in named_parameters}
        missing = all_params - named_ids
        if missing:
            raise ValueError(
                "named_parameters was given but {} of the optimizer's parameters are not in "
                "it".format(len(missing))
            )
        self._parameter_names = {p: name for name, p in named_parameters}
        self.backward_passes_per_step = backward_passes_per_step
        self._allreduce_delay = {p: backward_passes_per_step for _, p in named_parameters}
        self.op = op
        self.gradient_predivide_factor = gradient_predivide_factor
        self._handles = {}
        self._grad_accs = []
        self._requires_update = set()
        self._synchronized = False
        self._should_synchronize = True
        if _runtime.size() > 1:
            self._register_hooks()

    def set_backward_passes_per_step(self, passes):
        self.backward_passes_per_step = passes
        for p in self._allreduce_delay:
            self._allreduce_delay[p] = passes

    def _register_hooks(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.requires_grad:
                    p.grad = p.data.new(p.size()).zero_()
                    self._requires_update.add(p)
                    # expand_as gives a view whose grad_fn leads to p's AccumulateGrad node; a hook
                    # there runs after p.grad has been accumulated for this backward pass.
                    accumulator = p.expand_as(p).grad_fn.next_functions[0][0]
                    accumulator.register_hook(self._make_hook(p))
                    self._grad_accs.append(accumulator)

    def _allreduce_grad_async(self, p):
        if p.grad is None:
            # Unused in this step (or zero_grad(set_to_none=True)): every rank still has to take
            # part in the allreduce, with zeros.
            p.grad = p.data.new(p.size()).zero_()
        name = self._parameter_names.get(p)
        prescale, postscale = 1.0, 1.0
        if self.op == mpi_ops.Average:
            # Divide part before the sum (to keep fp16 sums in range) and the rest after; the
            # average itself divides by size().
            prescale = 1.0 / self.gradient_predivide_factor
            postscale = self.gradient_predivide_factor
        compressed, ctx = self._compression.compress(p.grad)
        handle = mpi_ops.allreduce_async_(
            compressed, name=name, op=self.op, prescale_factor=prescale, postscale_factor=postscale
        )
        return handle, ctx

    def _make_hook(self, p):
        def hook(*ignore):
            if p in self._handles and self._handles[p][0] is not None:
                if self._allreduce_delay[p] <= 0:
                    raise AssertionError(
                        "Gradients were computed more than backward_passes_per_step times before "
                        "call to step(). Increase backward_passes_per_step to accumulate "
                        "gradients locally."
                    )
            assert not p.grad.requires_grad
            assert self._allreduce_delay[p] > 0
            handle, ctx = None, None
            self._allreduce_delay[p] -= 1
            if self._allreduce_delay[p] == 0:
                handle, ctx = self._allreduce_grad_async(p)
            self._handles[p] = (handle, ctx)

        return hook

    def synchronize(self):
        """Waits for every gradient's allreduce (starting those no hook started) and installs the
        averaged gradients."""
        missing = self._requires_update - set(self._handles.keys())
        for p in sorted(missing, key=lambda q: self._parameter_names[q]):
            self._handles[p] = self._allreduce_grad_async(p)
        for p, (handle, ctx) in list(self._handles.items()):
            if handle is None:
                handle, ctx = self._allreduce_grad_async(p)
                self._handles[p] = (handle, ctx)
        for p, (handle, ctx) in self._handles.items():
            output = mpi_ops.synchronize(handle)
            self._allreduce_delay[p] = self.backward_passes_per_step
            p.grad.set_(self._compression.decompress(output, ctx))
        self._handles.clear()
        self._synchronized = True

    @contextlib.contextmanager
    def skip_synchronize(self):
        """Inside, step() does not synchronize (call synchronize() yourself first)."""
        self._should_synchronize = False
        try:
            yield
        finally:
            self._should_synchronize = True

    def step(self, closure=None):
        if self._should_synchronize:
            if self._synchronized:
                warnings.warn(
                    "optimizer.step() called without optimizer.skip_synchronize() after "
                    "optimizer.synchronize(): the gradients are averaged again"
                )
            self.synchronize()
        self._synchronized = False
        return super(self.__class__, self).step(closure)

    def zero_grad(self, *args, **kwargs):
        if self._handles:
            raise AssertionError(
                "optimizer.zero_grad() was called after loss.backward() but before "
                "optimizer.step() or optimizer.synchronize(); this is prohibited as it can cause "
                "a race condition"
            )
        return super(self.__class__, self).zero_grad(*args, **kwargs)


def DistributedOptimizer(
    optimizer,
    named_parameters=None,
    compression=Compression.none,
    backward_passes_per_step=1,
    op=mpi_ops.Average,
    gradient_predivide_factor=1.0,
):
    """Wraps a torch optimizer so that step() uses gradients averaged (op) over all ranks.

    named_parameters names each gradient's allreduce (model.named_parameters()); without it
    names come from the parameters' positions, which is fine when every rank builds the same
    model. backward_passes_per_step > 1 accumulates that many backward passes locally before
    communicating. gradient_predivide_factor splits the averaging into a division before and
    after the sum (Average only).
    """
    if gradient_predivide_factor != 1.0 and op != mpi_ops.Average:
        raise ValueError("gradient_predivide_factor needs op=Average")
    if op == mpi_ops.Adasum:
        raise NotImplementedError("hoop.torch.DistributedOptimizer: Adasum is not implemented")
    cls = type(
        optimizer.__class__.__name__,
        (optimizer.__class__,),
        dict(_DistributedOptimizer.__dict__),
    )
    return cls(
        optimizer.param_groups,
        named_parameters,
        compression,
        backward_passes_per_step,
        op,
        gradient_predivide_factor,
    )
