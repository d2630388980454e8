"""The argument checks of the collectives (PyTorch's exception types and messages) and the
reduction ops they check against; distributed_c10d re-exports ReduceOp."""
import enum

from .._tensor import Tensor

__all__ = ["RedOpType", "ReduceOp"]


class RedOpType(enum.Enum):
    SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = range(9)


class ReduceOp:
    RedOpType = RedOpType
    SUM, AVG, PRODUCT, MIN = RedOpType.SUM, RedOpType.AVG, RedOpType.PRODUCT, RedOpType.MIN
    MAX, BAND, BOR, BXOR = RedOpType.MAX, RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR


def _check_single_tensor(param, name):
    if not isinstance(param, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(param)} instead.")


def _check_tensor_list(param, name):
    if not isinstance(param, list) or not all(isinstance(p, Tensor) for p in param):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor]\n             but got {type(param)} instead.")


def _check_op(op, tensors, fname):
    if not isinstance(op, RedOpType):
        raise TypeError(f"{fname}(): incompatible function arguments: op must be a "
                        f"torch.distributed.ReduceOp, got {op!r}")
    if op is RedOpType.PREMUL_SUM:
        raise RuntimeError("PREMUL_SUM is not supported by the Gloo backend")
    for t in tensors:  # (PyTorch checks complex support first, then the op's dtypes)
        if t.dtype.is_complex and op not in (RedOpType.SUM, RedOpType.AVG):
            raise ValueError(f"{fname} does not support {op} on complex tensors")
        if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and \
                (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
        if op is RedOpType.AVG and not (t.dtype.is_floating_point or t.dtype.is_complex):
            # gloo's average divides the sum in place, which an integer tensor cannot hold
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{t.dtype._scalar_name}")


def _same_dtype(*lists):
    tensors = [t for tl in lists for t in tl]
    if tensors:
        first = tensors[0].dtype
        for t in tensors[1:]:
            if t.dtype != first:
                raise ValueError(f"Invalid usage of tensors with different dtypesFound "
                                 f"{first} and  {t.dtype}")


def _size_check(fname, what, tensors, expected):
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(expected):
            raise RuntimeError(f"ProcessGroupGloo::{fname}: invalid {what} size at index {i} "
                               f"(expected ({', '.join(map(str, expected))}), got "
                               f"({', '.join(map(str, t.shape))}))")


def _list_check(fname, what, tensors, pg):
    if len(tensors) != pg.size():
        raise RuntimeError(f"ProcessGroupGloo::{fname}: invalid {what} list at index 0 "
                           f"(expected length {pg.size()}, got {len(tensors)})")
