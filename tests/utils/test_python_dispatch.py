"""is_traceable_wrapper_subclass: which tensors serializers save through __tensor_flatten__."""
import ember
from ember.utils._python_dispatch import (is_traceable_wrapper_subclass,
                                          is_traceable_wrapper_subclass_type)


def _kinds(lib):
    class Plain(lib.Tensor):
        pass

    class Wrapper(lib.Tensor):
        def __tensor_flatten__(self):
            return [], None

        @staticmethod
        def __tensor_unflatten__(inner, meta, size, stride):
            return None
    return [lib.ones(2), lib.ones(2).as_subclass(Plain), lib.ones(2).as_subclass(Wrapper),
            Wrapper, 3]


def test_matches_pytorch(torch):
    from torch.utils import _python_dispatch as theirs
    for ours_obj, their_obj in zip(_kinds(ember), _kinds(torch)):
        assert is_traceable_wrapper_subclass(ours_obj) == \
            theirs.is_traceable_wrapper_subclass(their_obj)
    for ours_type, their_type in ((ember.Tensor, torch.Tensor),
                                  (type(_kinds(ember)[2]), type(_kinds(torch)[2]))):
        assert is_traceable_wrapper_subclass_type(ours_type) == \
            theirs.is_traceable_wrapper_subclass_type(their_type)
