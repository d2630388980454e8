"""`torch.utils.weak`: weak references and weak-keyed dictionaries that go by object identity.
Tensors compare elementwise, so the stdlib's WeakKeyDictionary (which compares keys with ==)
cannot hold them; these compare the referents with `is`."""
import collections.abc
import weakref

__all__ = ["TensorWeakRef", "WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary"]


class WeakIdRef(weakref.ref):
    """A weak reference hashed by its referent's id and equal to another when both point to
    the same live object (a dead one equals only itself)."""
    __slots__ = ["_id"]

    def __init__(self, key, callback=None):
        self._id = id(key)
        super().__init__(key, callback)

    def __call__(self):
        return super().__call__()

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        mine, theirs = self(), other()
        if mine is not None and theirs is not None:
            return mine is theirs
        return self is other

    def __ne__(self, other):
        return not self == other


class WeakIdKeyDictionary(collections.abc.MutableMapping):
    """A mapping whose keys are held weakly and matched by identity; an entry goes away when
    its key is collected."""

    def __init__(self, dict=None, ref_type=WeakIdRef):
        self.data = {}
        self.ref_type = ref_type
        owner = weakref.ref(self)

        def remove(ref):
            mapping = owner()
            if mapping is not None:
                mapping.data.pop(ref, None)
        self._remove = remove
        if dict is not None:
            self.update(dict)

    def __getitem__(self, key):
        return self.data[self.ref_type(key)]

    def __setitem__(self, key, value):
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key):
        del self.data[self.ref_type(key)]

    def __contains__(self, key):
        try:
            ref = self.ref_type(key)
        except TypeError:
            return False
        return ref in self.data

    def __iter__(self):
        for ref in list(self.data):
            key = ref()
            if key is not None:
                yield key

    def __len__(self):
        return sum(1 for ref in list(self.data) if ref() is not None)

    def __repr__(self):
        return f"<{type(self).__name__} at {id(self):#x}>"

    def keyrefs(self):
        """The weak references to the keys (some may be dead by the time they are read)."""
        return list(self.data)

    def copy(self):
        new = type(self)(ref_type=self.ref_type)
        for key, value in self.items():
            new[key] = value
        return new

    __copy__ = copy

    def __deepcopy__(self, memo):
        import copy as _copy  # here: `import ember` need not load it
        new = type(self)(ref_type=self.ref_type)
        for key, value in self.items():
            new[key] = _copy.deepcopy(value, memo)
        return new

    def __or__(self, other):
        if not isinstance(other, collections.abc.Mapping):
            return NotImplemented
        new = self.copy()
        new.update(other)
        return new

    def __ior__(self, other):
        self.update(other)
        return self


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor; calling it gives the tensor, or None once it is gone."""

    def __init__(self, tensor):
        if not hasattr(tensor, "_array"):
            raise AssertionError(f"expected torch.Tensor, got {type(tensor)}.")
        self.ref = weakref.ref(tensor)

    def __call__(self):
        return self.ref()
