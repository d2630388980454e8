"""Tensor memory layouts (`ember.strided`, `ember.sparse_coo`), as `torch.layout`."""

__all__ = ["layout", "strided", "sparse_coo"]


class layout:
    """A tensor memory layout; prints as PyTorch's (`torch.strided`)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_layout_by_name, (self.name,))


def _layout_by_name(name):
    return {"strided": strided, "sparse_coo": sparse_coo}[name]


strided = layout("strided")
sparse_coo = layout("sparse_coo")
