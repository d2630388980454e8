"""PyTorch's small value types (`torch.device`, `torch.dtype`, `torch.layout`,
`torch.memory_format`, `torch.finfo`, `torch.iinfo`, `torch.Generator`) are C types: their
attributes are read-only, they take no new ones, and their errors (attributes, format specs)
name the type as C does ('torch.device'). A program that mistypes an attribute, or writes
into what it believes is its own copy of a shared dtype or device, gets PyTorch's error here
too instead of silently changing the object every tensor shares.

A class opts in by deriving from `Frozen` and naming itself in `_torch_name`; its own code
fills its fields once with `fill(obj, name=value, ...)`."""

__all__ = ["Frozen", "fill"]


class Frozen:
    __slots__ = ()
    _torch_name = None  # what PyTorch's messages call the type: "torch.device"

    def __getattr__(self, name):  # reached only when ordinary lookup found nothing
        raise AttributeError(f"'{self._torch_name}' object has no attribute '{name}'")

    def __format__(self, spec):  # object's: str() for an empty spec, else its TypeError
        if spec:
            raise TypeError(f"unsupported format string passed to {self._torch_name}.__format__")
        return str(self)

    def __setattr__(self, name, value):
        if hasattr(self, "__dict__"):  # a user's subclass (of Generator) keeps its own fields
            object.__setattr__(self, name, value)
        else:
            _refuse(self, name)

    def __delattr__(self, name):
        if hasattr(self, "__dict__"):
            object.__delattr__(self, name)
        else:
            _refuse(self, name)


def _refuse(obj, name):
    found = getattr(type(obj), name, _ABSENT)
    if found is _ABSENT:
        raise AttributeError(f"'{obj._torch_name}' object has no attribute '{name}'")
    if hasattr(type(found), "__set__"):  # a field (slot or property)
        raise AttributeError(f"attribute '{name}' of '{obj._torch_name}' objects is not "
                             "writable")
    raise AttributeError(f"'{obj._torch_name}' object attribute '{name}' is read-only")


_ABSENT = object()


def fill(obj, **fields):
    """Sets a Frozen object's fields (its own constructor's one way to write them)."""
    for name, value in fields.items():
        object.__setattr__(obj, name, value)
