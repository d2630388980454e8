"""The namespaces of user-defined operators (`ember.library`), read by `ember.ops.<ns>` as
PyTorch users read `torch.ops.<ns>.<name>`. The library module (floor 5) fills them; they
are kept here so that the ops package can answer without importing upwards."""

__all__ = ["OpNamespace", "NAMESPACES", "namespace"]


class OpNamespace:
    """`torch.ops.<ns>`: the operators defined in namespace `ns`, as attributes."""

    def __init__(self, name):
        self.name = name
        self._ops = {}

    def __getattr__(self, op_name):
        ops = self.__dict__["_ops"]
        if op_name in ops:
            return ops[op_name]
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                             f"'{op_name}'")

    def __iter__(self):
        return iter(self._ops)

    def __repr__(self):
        return f"'torch.ops.{self.name}'"


NAMESPACES = {}


def namespace(name):
    """The namespace `name`, made on first use."""
    found = NAMESPACES.get(name)
    if found is None:
        found = NAMESPACES[name] = OpNamespace(name)
    return found
