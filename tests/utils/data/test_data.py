"""`ember.utils.data`: datasets, samplers, collation and the DataLoader.

Parity with torch where the result is deterministic (collation of every input kind, default_convert,
lengths, sequential/batch/distributed index orders, random_split lengths, ConcatDataset
indexing, errors with their types and messages); behaviour tests without torch for the random
parts (seeded shuffles); the worker processes' tests are in test_dataloader_workers.py."""
import collections
import warnings

import numpy as np
import pytest

import ember
from ember.utils.data import (BatchSampler, DataLoader, Dataset, DistributedSampler,
                              IterableDataset, RandomSampler, SequentialSampler, Subset,
                              SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                              default_collate, default_convert, get_worker_info, random_split)

from ._shared import Range, _order


# ---- helpers ---------------------------------------------------------------------------------
def data_module(m):
    """`m.utils.data` for m in (ember, torch)."""
    import importlib
    return importlib.import_module(m.__name__ + ".utils.data")


def assert_same(e, t, path="out"):
    """An ember structure equals a torch one: containers of the same type names, tensors with
    the same dtype, shape and values, everything else equal."""
    import torch
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{path}: {type(e)} is not a tensor"
        assert str(e.dtype) == str(t.dtype), f"{path}: {e.dtype} != {t.dtype}"
        assert tuple(e.shape) == tuple(t.shape), f"{path}: {tuple(e.shape)} != {tuple(t.shape)}"
        np.testing.assert_array_equal(e.numpy(), t.numpy(), err_msg=path)
        assert e.requires_grad == t.requires_grad
        return
    assert type(e).__name__ == type(t).__name__, f"{path}: {type(e)} != {type(t)}"
    if isinstance(t, np.ndarray):
        assert e.dtype == t.dtype and e.shape == t.shape
        np.testing.assert_array_equal(e, t)
    elif isinstance(t, collections.abc.Mapping):
        assert list(e.keys()) == list(t.keys()), path
        for k in t:
            assert_same(e[k], t[k], f"{path}[{k!r}]")
    elif isinstance(t, (list, tuple)):
        assert len(e) == len(t), path
        for i, (a, b) in enumerate(zip(e, t)):
            assert_same(a, b, f"{path}[{i}]")
    else:
        assert e == t, path


def same_error(fn, match_prefix=None):
    """fn(m) raises the same exception type and message under ember and torch."""
    import torch
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as ee:
        fn(ember)
    assert type(ee.value).__name__ == type(te.value).__name__, (ee.value, te.value)
    if match_prefix is None:
        assert str(ee.value) == str(te.value)
    else:
        assert str(ee.value)[:match_prefix] == str(te.value)[:match_prefix]
    return ee.value



Point = collections.namedtuple("Point", ["x", "y"])


class MyList(list):
    pass


class Opaque:
    pass


# ---- default_collate: parity for every input kind -------------------------------------------
COLLATE_CASES = {
    "float_tensors": lambda m: [m.tensor([1.0, 2.0, 3.0]) * i for i in range(4)],
    "int_scalar_tensors": lambda m: [m.tensor(i) for i in range(3)],
    "bool_tensors": lambda m: [m.tensor([True, False]), m.tensor([False, False])],
    "float64_2d_tensors": lambda m: [m.ones(2, 3, dtype=m.float64) * i for i in range(2)],
    "np_float32": lambda m: [np.arange(6, dtype=np.float32).reshape(2, 3) + i for i in range(3)],
    "np_int64": lambda m: [np.arange(4) * i for i in range(2)],
    "np_int32": lambda m: [np.arange(4, dtype=np.int32) for _ in range(2)],
    "np_uint8": lambda m: [np.full((2, 2), 255, dtype=np.uint8) for _ in range(2)],
    "np_bool": lambda m: [np.array([True, False]), np.array([False, True])],
    "np_float16": lambda m: [np.ones(3, dtype=np.float16) for _ in range(2)],
    "np_0d": lambda m: [np.array(1.5), np.array(2.5)],
    "np_scalar_float32": lambda m: [np.float32(1.5), np.float32(2)],
    "np_scalar_float64": lambda m: [np.float64(1.5), np.float64(2)],
    "np_scalar_int64": lambda m: [np.int64(1), np.int64(7)],
    "np_scalar_int16": lambda m: [np.int16(1), np.int16(7)],
    "np_scalar_bool": lambda m: [np.bool_(True), np.bool_(False)],
    "floats": lambda m: [0.5, 1.5, -2.0],
    "ints": lambda m: [1, 2, 3],
    "bools": lambda m: [True, False, True],
    "strings": lambda m: ["a", "bc", ""],
    "bytes": lambda m: [b"a", b"bc"],
    "np_str_scalars": lambda m: [np.str_("a"), np.str_("b")],
    "dict": lambda m: [{"x": m.tensor([float(i)]), "label": i, "name": f"s{i}"}
                       for i in range(3)],
    "ordered_dict": lambda m: [collections.OrderedDict([("b", i), ("a", float(i))])
                               for i in range(2)],
    "defaultdict": lambda m: [collections.defaultdict(int, {"k": i}) for i in range(2)],
    "nested_dict": lambda m: [{"meta": {"id": i, "tags": ["t", "u"]},
                               "arr": np.full(2, i, dtype=np.float64)} for i in range(2)],
    "tuple": lambda m: [(m.tensor([i, i]), i, "s") for i in range(3)],
    "list": lambda m: [[i, float(i)] for i in range(3)],
    "list_subclass": lambda m: [MyList([i, i + 1]) for i in range(2)],
    "nested_lists": lambda m: [[[i, i], [i * 2, i * 3]] for i in range(2)],
    "namedtuple": lambda m: [Point(m.tensor([float(i)]), i) for i in range(3)],
    "namedtuple_nested": lambda m: [Point({"a": i}, (i, 1.0)) for i in range(2)],
    "tensor_dataset_items": lambda m: [(m.arange(3.0) + i, m.tensor(i)) for i in range(4)],
}


@pytest.mark.parametrize("case", sorted(COLLATE_CASES))
def test_default_collate_parity(case, torch):
    make = COLLATE_CASES[case]
    expected = torch.utils.data.default_collate(make(torch))
    got = default_collate(make(ember))
    assert_same(got, expected)


@pytest.mark.parametrize("case", sorted(COLLATE_CASES))
def test_default_convert_parity(case, torch):
    make = COLLATE_CASES[case]
    for sample_t, sample_e in zip(make(torch), make(ember)):
        assert_same(default_convert(sample_e), torch.utils.data.default_convert(sample_t))


@pytest.mark.parametrize("make", [
    lambda m: [np.array(["a", "b"]), np.array(["c", "d"])],
    lambda m: [np.array([object(), 1], dtype=object)] * 2,
    lambda m: [None, None],
    lambda m: [Opaque(), Opaque()],
    lambda m: [[1, 2], [3]],
    lambda m: [{"a": [1, 2]}, {"a": [3]}],
    lambda m: [m.ones(2), m.ones(3)],
], ids=["np_str", "np_object", "none", "opaque", "ragged_lists", "ragged_in_dict",
        "tensor_shapes"])
def test_default_collate_errors(make, torch):
    if make(torch)[0] is not None and isinstance(make(torch)[0], torch.Tensor):
        # stacking mismatched shapes: both raise RuntimeError (the wording is the stack op's)
        with pytest.raises(RuntimeError):
            default_collate(make(ember))
        return
    same_error(lambda m: data_module(m).default_collate(make(m)))


def test_default_convert_special_cases(torch):
    for m in (torch,):
        strs = np.array(["a", "b"])
        assert default_convert(strs) is strs  # string arrays are left alone
        assert m.utils.data.default_convert(strs) is strs
    t = ember.ones(2)
    assert default_convert(t) is t
    assert_same(default_convert((np.zeros(2), "x", 3)),
                torch.utils.data.default_convert((np.zeros(2), "x", 3)))
    # a non-mutable Mapping that cannot be built from a dict falls back to a plain dict
    from types import MappingProxyType
    assert_same(default_convert(MappingProxyType({"a": np.ones(1)})),
                torch.utils.data.default_convert(MappingProxyType({"a": np.ones(1)})))


def test_default_collate_keeps_mutable_containers_type():
    class Record(dict):
        pass
    out = default_collate([Record(a=1), Record(a=2)])
    assert type(out) is Record and out["a"].tolist() == [1, 2]
    out = default_collate([MyList([1.0]), MyList([2.0])])
    assert type(out) is MyList and out[0].dtype == ember.float64


def test_collate_registry_is_extensible():
    from ember.utils.data._utils.collate import collate, default_collate_fn_map
    fn_map = dict(default_collate_fn_map)
    fn_map[Opaque] = lambda batch, *, collate_fn_map: len(batch)
    assert collate([{"o": Opaque()}, {"o": Opaque()}], collate_fn_map=fn_map) == {"o": 2}


def test_collated_batches_do_not_require_grad():
    out = default_collate([np.ones(2), np.ones(2)])
    assert not out.requires_grad
    ds = TensorDataset(ember.randn(6, 2), ember.arange(6))
    for num_workers in (0, 2):
        for x, y in DataLoader(ds, batch_size=4, num_workers=num_workers):
            assert not x.requires_grad and not y.requires_grad
            assert x.grad_fn is None


# ---- datasets --------------------------------------------------------------------------------


def _classes(m):
    d = data_module(m)

    class R(d.Dataset):
        def __init__(self, n, offset=0):
            self.n, self.offset = n, offset

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return self.offset + i

    class It(d.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __iter__(self):
            return iter(range(self.n))
    return d, R, It


def test_concat_dataset_indexing_parity(torch):
    out = {}
    for m in (ember, torch):
        d, R, _ = _classes(m)
        cat = d.ConcatDataset([R(3), R(0, 100), R(4, 10), R(2, 20)])
        out[m.__name__] = (len(cat), cat.cumulative_sizes, [cat[i] for i in range(-9, 9)],
                           d.ConcatDataset.cumsum([R(2), R(5)]))
    assert out["ember"] == out["torch"]
    assert out["ember"][0] == 9

    def neg_out_of_range(m):
        d, R, _ = _classes(m)
        d.ConcatDataset([R(3)])[-4]
    same_error(neg_out_of_range)
    same_error(lambda m: data_module(m).ConcatDataset([]))
    same_error(lambda m: data_module(m).ConcatDataset([_classes(m)[2](3)]))


def test_dataset_addition_and_chain(torch):
    for m in (ember, torch):
        d, R, It = _classes(m)
        cat = R(2) + R(3, 10)
        assert type(cat).__name__ == "ConcatDataset" and [cat[i] for i in range(5)] == \
            [0, 1, 10, 11, 12]
        chain = It(2) + It(3)
        assert type(chain).__name__ == "ChainDataset"
        assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    same_error(lambda m: list(data_module(m).ChainDataset([_classes(m)[1](2)])))
    same_error(lambda m: len(data_module(m).ChainDataset([_classes(m)[1](2)])))
    with pytest.raises(NotImplementedError):
        Dataset()[0]


def test_iterable_dataset_is_abstract(torch):
    for m in (ember, torch):
        class NoIter(data_module(m).IterableDataset):
            pass
        with pytest.raises(TypeError):
            NoIter()
        assert isinstance(_classes(m)[2](1), collections.abc.Iterable)
    assert Dataset[int] is not None  # generic, as torch's: `class D(Dataset[Tensor])` works


def test_tensor_dataset_parity(torch):
    for m in (ember, torch):
        d = data_module(m)
        ds = d.TensorDataset(m.arange(12.0).reshape(4, 3), m.arange(4))
        assert len(ds) == 4
        x, y = ds[2]
        assert x.tolist() == [6.0, 7.0, 8.0] and y.item() == 2
        assert isinstance(ds[1], tuple) and len(ds.tensors) == 2
    same_error(lambda m: data_module(m).TensorDataset(m.ones(3), m.ones(4)))


def test_subset_and_stack_dataset_parity(torch):
    out = {}
    for m in (ember, torch):
        d, R, _ = _classes(m)
        sub = d.Subset(R(10), [9, 2, 4])
        subsub = d.Subset(sub, [2, 0])
        stack_t = d.StackDataset(R(3), R(3, 10))
        stack_d = d.StackDataset(a=R(3), b=R(3, 5))
        out[m.__name__] = (len(sub), [sub[i] for i in range(3)], sub.__getitems__([0, 1]),
                           [subsub[0], subsub[1]], len(subsub), stack_t[1], stack_d[2],
                           stack_t.__getitems__([0, 2]), stack_d.__getitems__([1]),
                           len(stack_d))
    assert out["ember"] == out["torch"]

    same_error(lambda m: data_module(m).StackDataset(_classes(m)[1](2), _classes(m)[1](3)))
    same_error(lambda m: data_module(m).StackDataset(_classes(m)[1](2), b=_classes(m)[1](2)))
    same_error(lambda m: data_module(m).StackDataset())

    def bad_subset_subclass(m):
        class S(data_module(m).Subset):
            def __getitem__(self, idx):
                return 0
        S(_classes(m)[1](3), [0])
    same_error(bad_subset_subclass)


@pytest.mark.parametrize("n,lengths", [
    (10, [3, 7]), (10, [0.3, 0.7]), (10, [0.33, 0.33, 0.34]), (7, [0.5, 0.5]),
    (11, [0.1, 0.2, 0.3, 0.4]), (5, [1.0]), (3, [0.1, 0.1, 0.8]), (4, [0, 4]),
])
def test_random_split_lengths_parity(n, lengths, torch):
    with warnings.catch_warnings(record=True) as w_t:
        warnings.simplefilter("always")
        ts = torch.utils.data.random_split(range(n), lengths,
                                           generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings(record=True) as w_e:
        warnings.simplefilter("always")
        es = random_split(range(n), lengths, generator=ember.Generator().manual_seed(0))
    assert [len(s) for s in es] == [len(s) for s in ts]
    assert [str(x.message) for x in w_e] == [str(x.message) for x in w_t]
    everything = sorted(i for s in es for i in (s[j] for j in range(len(s))))
    assert everything == list(range(n))
    assert all(isinstance(s, Subset) for s in es)


def test_random_split_errors_and_reproducibility(torch):
    same_error(lambda m: data_module(m).random_split(range(10), [3, 3]))
    same_error(lambda m: data_module(m).random_split(range(10), [1.5, -0.5]))
    a = random_split(range(20), [5, 15], generator=ember.Generator().manual_seed(3))
    b = random_split(range(20), [5, 15], generator=ember.Generator().manual_seed(3))
    assert [list(s.indices) for s in a] == [list(s.indices) for s in b]
    ember.manual_seed(4)
    c = random_split(range(20), [0.25, 0.75])
    ember.manual_seed(4)
    d = random_split(range(20), [0.25, 0.75])
    assert [list(s.indices) for s in c] == [list(s.indices) for s in d]


# ---- samplers --------------------------------------------------------------------------------
def test_sequential_and_batch_sampler_parity(torch):
    for n in (0, 1, 7, 10):
        for bs in (1, 3, 5, 10, 11):
            for drop_last in (False, True):
                got = BatchSampler(SequentialSampler(range(n)), bs, drop_last)
                exp = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(range(n)),
                                                    bs, drop_last)
                assert list(got) == list(exp)
                assert len(got) == len(exp)
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    assert len(SequentialSampler(range(4))) == 4
    # a BatchSampler over any iterable of indices
    assert list(BatchSampler([5, 1, 4], 2, False)) == [[5, 1], [4]]


@pytest.mark.parametrize("call", [
    lambda d: d.BatchSampler(range(3), 0, False),
    lambda d: d.BatchSampler(range(3), True, False),
    lambda d: d.BatchSampler(range(3), "2", False),
    lambda d: d.BatchSampler(range(3), 2, 1),
    lambda d: d.RandomSampler(range(3), replacement=1),
    lambda d: d.RandomSampler(range(3), num_samples=0),
    lambda d: d.RandomSampler(range(3), num_samples=2.0),
    lambda d: d.RandomSampler([]),
    lambda d: d.WeightedRandomSampler([1.0, 2.0], 0),
    lambda d: d.WeightedRandomSampler([1.0, 2.0], True),
    lambda d: d.WeightedRandomSampler([1.0, 2.0], 2, replacement=None),
    lambda d: d.WeightedRandomSampler([[1.0, 2.0]], 2),
    lambda d: d.DistributedSampler(range(4), num_replicas=2, rank=2),
    lambda d: d.DistributedSampler(range(4), num_replicas=2, rank=-1),
])
def test_sampler_argument_errors_parity(call, torch):
    same_error(lambda m: call(data_module(m)))


def test_random_sampler_behaviour(torch):
    for kwargs in ({}, {"num_samples": 5}, {"num_samples": 25}, {"replacement": True},
                   {"replacement": True, "num_samples": 70}):
        s = RandomSampler(range(10), generator=ember.Generator().manual_seed(1), **kwargs)
        ts = torch.utils.data.RandomSampler(range(10), **kwargs)
        assert len(s) == len(ts) == s.num_samples
        got = list(s)
        assert len(got) == len(s) and all(isinstance(i, int) and 0 <= i < 10 for i in got)
        if not kwargs.get("replacement"):
            counts = collections.Counter(got)
            assert max(counts.values()) - min(counts.values()) <= 1  # whole permutations
            if len(got) % 10 == 0:
                assert set(counts.values()) == {len(got) // 10}
        # same generator seed, same order
        again = RandomSampler(range(10), generator=ember.Generator().manual_seed(1), **kwargs)
        assert list(again) == got
    # with no generator: one draw of the global generator per epoch
    s = RandomSampler(range(30))
    ember.manual_seed(5)
    e1, e2 = list(s), list(s)
    ember.manual_seed(5)
    assert [list(s), list(s)] == [e1, e2] and e1 != e2
    assert sorted(e1) == list(range(30))


def test_subset_and_weighted_samplers():
    s = SubsetRandomSampler([3, 8, 11, 20], generator=ember.Generator().manual_seed(0))
    got = list(s)
    assert sorted(got) == [3, 8, 11, 20] and len(s) == 4
    assert list(SubsetRandomSampler([3, 8, 11, 20], generator=ember.Generator().manual_seed(0))) \
        == got
    w = WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=ember.Generator().manual_seed(0))
    got = list(w)
    assert len(got) == len(w) == 50 and set(got) <= {1, 3}
    assert w.weights.dtype == ember.float64
    nr = list(WeightedRandomSampler([1.0, 1.0, 1.0, 1.0], 4, replacement=False))
    assert sorted(nr) == [0, 1, 2, 3]


@pytest.mark.parametrize("n,replicas,drop_last", [
    (10, 3, False), (10, 3, True), (9, 3, False), (9, 3, True), (2, 4, False), (5, 4, True),
    (1, 3, False), (7, 2, False), (13, 4, True),
])
def test_distributed_sampler_parity(n, replicas, drop_last, torch):
    for rank in range(replicas):
        got = DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False,
                                 drop_last=drop_last)
        exp = torch.utils.data.DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                                  shuffle=False, drop_last=drop_last)
        assert list(got) == list(exp)
        assert len(got) == len(exp) == len(list(got))
        assert (got.num_samples, got.total_size) == (exp.num_samples, exp.total_size)
    # shuffled: every rank gets num_samples indices; together they cover the dataset
    shards = [list(DistributedSampler(range(n), num_replicas=replicas, rank=r, seed=3,
                                      drop_last=drop_last)) for r in range(replicas)]
    exp_shards = [list(torch.utils.data.DistributedSampler(range(n), num_replicas=replicas,
                                                           rank=r, drop_last=drop_last))
                  for r in range(replicas)]
    assert [len(s) for s in shards] == [len(s) for s in exp_shards]
    together = [i for s in shards for i in s]
    if drop_last:
        assert len(set(together)) == len(together)
    else:
        assert set(together) == set(range(n))


def test_distributed_sampler_epochs():
    s = DistributedSampler(range(20), num_replicas=2, rank=0, seed=7)
    e0 = list(s)
    assert list(s) == e0  # same epoch, same order
    s.set_epoch(1)
    e1 = list(s)
    assert e1 != e0 and s.epoch == 1
    other = DistributedSampler(range(20), num_replicas=2, rank=1, seed=7)
    other.set_epoch(1)
    assert sorted(e1 + list(other)) == list(range(20))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))  # no process group, as PyTorch says


# ---- DataLoader: arguments, lengths, batches --------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda d, R, It: d.DataLoader(R(4), batch_sampler=d.BatchSampler(range(4), 2, False),
                                  batch_size=2),
    lambda d, R, It: d.DataLoader(R(4), batch_sampler=[[0, 1]], shuffle=True),
    lambda d, R, It: d.DataLoader(R(4), batch_sampler=[[0, 1]], sampler=[0, 1]),
    lambda d, R, It: d.DataLoader(R(4), batch_sampler=[[0, 1]], drop_last=True),
    lambda d, R, It: d.DataLoader(R(4), sampler=[0, 1], shuffle=True),
    lambda d, R, It: d.DataLoader(R(4), num_workers=-1),
    lambda d, R, It: d.DataLoader(R(4), timeout=-1),
    lambda d, R, It: d.DataLoader(R(4), prefetch_factor=2),
    lambda d, R, It: d.DataLoader(R(4), num_workers=1, prefetch_factor=-1),
    lambda d, R, It: d.DataLoader(R(4), persistent_workers=True),
    lambda d, R, It: d.DataLoader(R(4), batch_size=None, drop_last=True),
    lambda d, R, It: d.DataLoader(It(4), shuffle=True),
    lambda d, R, It: d.DataLoader(R(4), multiprocessing_context="fork"),
    lambda d, R, It: d.DataLoader(R(4), num_workers=1, multiprocessing_context="nope"),
    lambda d, R, It: d.DataLoader(R(4), num_workers=1, multiprocessing_context=3),
])
def test_dataloader_argument_errors_parity(call, torch):
    same_error(lambda m: call(*_classes(m)))


def test_dataloader_iterable_sampler_errors_parity(torch):
    # the message ends with the sampler's repr (an address): compare up to it
    same_error(lambda m: _classes(m)[0].DataLoader(_classes(m)[2](4), sampler=[0, 1]),
               match_prefix=70)
    same_error(lambda m: _classes(m)[0].DataLoader(_classes(m)[2](4), batch_sampler=[[0]]),
               match_prefix=70)


def test_dataloader_attributes_cannot_be_reassigned(torch):
    for attr in ("batch_size", "sampler", "batch_sampler", "drop_last", "dataset",
                 "persistent_workers"):
        same_error(lambda m: setattr(_classes(m)[0].DataLoader(range(3)), attr, None))
    loader = DataLoader(range(3))
    loader.num_workers = 0  # others may be set, as in torch
    loader.collate_fn = default_collate


@pytest.mark.parametrize("kwargs", [
    {}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": 10},
    {"batch_size": 11, "drop_last": True}, {"batch_size": None}, {"batch_size": 4, "shuffle": True},
])
def test_dataloader_len_and_batches_parity(kwargs, torch):
    out = {}
    for m in (ember, torch):
        d = data_module(m)
        ds = d.TensorDataset(m.arange(20.0).reshape(10, 2), m.arange(10))
        loader = d.DataLoader(ds, **kwargs)
        out[m.__name__] = (len(loader), list(loader))
        assert len(iter(loader)) == len(loader)
    assert out["ember"][0] == out["torch"][0] == len(out["ember"][1])
    if not kwargs.get("shuffle"):
        assert_same(out["ember"][1], out["torch"][1])


def test_dataloader_sampler_and_batch_sampler_parity(torch):
    out = {}
    for m in (ember, torch):
        d = data_module(m)
        dicts = [{"x": np.full(2, i, dtype=np.float32), "s": str(i)} for i in range(7)]
        a = list(d.DataLoader(dicts, sampler=[6, 0, 3], batch_size=2))
        b = list(d.DataLoader(dicts, batch_sampler=[[5, 1], [2], [0, 3, 4]]))
        c = list(d.DataLoader(dicts, batch_size=None, sampler=[4, 2]))
        lens = (len(d.DataLoader(dicts, sampler=[6, 0, 3], batch_size=2)),
                len(d.DataLoader(dicts, batch_sampler=[[5, 1], [2], [0, 3, 4]])))
        out[m.__name__] = (a, b, c, lens)
    assert_same(out["ember"], out["torch"])


def test_dataloader_iterable_parity(torch):
    out = {}
    for m in (ember, torch):
        d, _, It = _classes(m)
        loaders = [d.DataLoader(It(7), batch_size=3), d.DataLoader(It(7), batch_size=3,
                                                                    drop_last=True),
                   d.DataLoader(It(7), batch_size=None), d.DataLoader(It(7))]
        out[m.__name__] = [(len(ld), list(ld)) for ld in loaders]
        ld = d.DataLoader(It(5), batch_size=2)
        out[m.__name__].append((type(ld.sampler).__name__, type(ld.batch_sampler).__name__))
    assert_same(out["ember"], out["torch"])


def test_dataloader_collate_fn_and_attributes():
    loader = DataLoader(range(5), batch_size=2, collate_fn=lambda b: sum(b))
    assert list(loader) == [1, 5, 4]
    assert loader.collate_fn is not default_collate
    assert DataLoader(range(5)).collate_fn is default_collate
    assert DataLoader(range(5), batch_size=None).collate_fn is default_convert
    loader = DataLoader(range(5), batch_size=2, shuffle=True)
    assert isinstance(loader.sampler, RandomSampler) and isinstance(loader.batch_sampler,
                                                                    BatchSampler)
    assert loader.batch_size == 2 and loader.drop_last is False and loader.num_workers == 0
    loader = DataLoader(range(5), batch_sampler=[[0, 1]])
    assert loader.batch_size is None and loader.drop_last is False
    it = iter(DataLoader(range(5), batch_size=2))
    assert iter(it) is it and len(it) == 3 and next(it).tolist() == [0, 1]
    assert get_worker_info() is None


def test_dataloader_getitems_is_used():
    class Batched(Range):
        calls = []

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [self[i] for i in indices]
    ds = Batched(5)
    assert [b.tolist() for b in DataLoader(ds, batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert ds.calls == [[0, 1], [2, 3], [4]]


def test_pin_memory_is_accepted(torch):
    with warnings.catch_warnings(record=True) as w_t:
        warnings.simplefilter("always")
        exp = list(torch.utils.data.DataLoader(range(4), batch_size=2, pin_memory=True))
    with warnings.catch_warnings(record=True) as w_e:
        warnings.simplefilter("always")
        got = list(DataLoader(range(4), batch_size=2, pin_memory=True))
    assert_same(got, exp)
    assert [str(x.message) for x in w_e] == [str(x.message) for x in w_t]


def test_too_many_workers_warns_as_torch(torch):
    msgs = {}
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            data_module(m).DataLoader(range(4), num_workers=512)  # no worker starts here
        msgs[m.__name__] = [(x.category, str(x.message)) for x in w]
    assert msgs["ember"] == msgs["torch"] and len(msgs["ember"]) == 1


def test_iterable_len_mismatch_warns():
    class Liar(IterableDataset):
        def __len__(self):
            return 2

        def __iter__(self):
            return iter(range(4))
    loader = DataLoader(Liar())
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        assert len(list(loader)) == 4


# ---- shuffling and seeding --------------------------------------------------------------------


def test_seeded_generator_reproduces_shuffle():
    def loader(seed):
        return DataLoader(range(40), batch_size=4, shuffle=True,
                          generator=ember.Generator().manual_seed(seed))
    a, b, c = loader(0), loader(0), loader(1)
    a1, a2 = _order(a), _order(a)
    assert sorted(a1) == list(range(40)) and a1 != list(range(40))
    assert a1 != a2  # a new order each epoch
    assert [_order(b), _order(b)] == [a1, a2]
    assert _order(c) != a1


def test_manual_seed_makes_shuffle_epochs_reproducible():
    loader = DataLoader(range(40), batch_size=5, shuffle=True)
    ember.manual_seed(123)
    first = [_order(loader), _order(loader)]
    ember.manual_seed(123)
    assert [_order(loader), _order(loader)] == first
    assert first[0] != first[1]
    ember.manual_seed(124)
    assert _order(loader) != first[0]


def test_generate_state_matches_torch(torch):
    from torch.utils.data._utils.worker import _generate_state as torch_state
    from ember.utils.data._utils.worker import _generate_state
    for base in (0, 1, 2 ** 32 - 1, 2 ** 32, 5874934615388537135, 2 ** 63 - 1):
        for wid in (0, 1, 7):
            assert _generate_state(base, wid) == torch_state(base, wid)
