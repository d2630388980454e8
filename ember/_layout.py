"""Tensor memory layouts (`ember.strided`, `ember.sparse_coo`, the compressed sparse layouts
`ember.sparse_csr`, `sparse_csc`, `sparse_bsr`, `sparse_bsc`), as `torch.layout`."""

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc"]

from ._frozen import Frozen, fill


class layout(Frozen):
    """A tensor memory layout; prints as PyTorch's (`torch.strided`)."""

    __module__ = "ember"  # `<class 'torch.layout'>`
    __slots__ = ("name",)
    _torch_name = "torch.layout"

    def __init__(self, name):
        fill(self, name=name)

    def __repr__(self):
        return f"torch.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_layout_by_name, (self.name,))


def _layout_by_name(name):
    return {n: globals()[n] for n in __all__[1:]}[name]


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
