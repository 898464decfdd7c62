"""The reduction operations as Horovod names them, shared by hoop.torch and hoop.tensorflow, and
how a call's `op=` / deprecated `average=` arguments resolve to one of them."""

from hoop import _hoop

Average = "Average"
Sum = "Sum"
Adasum = "Adasum"
Min = "Min"
Max = "Max"
Product = "Product"
# Their names, for the __all__ of the modules that export them.
NAMES = [Average, Sum, Adasum, Min, Max, Product]

# Each operation's hoop reduction (hoop.op), Adasum aside: hoop does not implement it.
HOOP_OPS = {
    Average: _hoop.op.avg,
    Sum: _hoop.op.sum,
    Min: _hoop.op.min,
    Max: _hoop.op.max,
    Product: _hoop.op.prod,
}


def resolve_reduce_op(op, average, call):
    """The operation a call asked for (Average by default); call names it in errors, e.g.
    "hoop.torch.allreduce"."""
    if average is not None:
        if op is not None:
            raise ValueError("{}: give op or the deprecated average, not both".format(call))
        op = Average if average else Sum
    if op is None:
        op = Average
    if op == Adasum:
        raise NotImplementedError(
            "{}: Adasum is not implemented by hoop; use Average or Sum".format(call)
        )
    if op not in HOOP_OPS:
        raise ValueError("{}: unknown reduction op {!r}".format(call, op))
    return op
