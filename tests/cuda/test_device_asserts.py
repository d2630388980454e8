"""Bad data on cuda fails as PyTorch's CUDA kernels fail it: the op returns at once (no
device-to-host read), and the next read of the device or `torch.cuda.synchronize()` raises
RuntimeError "device-side assert triggered" (`ember.device.assert_on_device`). Unlike a real
CUDA context, the device stays usable afterwards."""
import pytest

import ember
import ember.nn.functional as F
from tests._strict_cupy import REAL_CUDA, TRANSFERS, strict_cupy

pytestmark = pytest.mark.skipif(REAL_CUDA, reason="counts the stand-in's transfers")

ASSERTED = "device-side assert triggered"


def _index(n):
    return ember.tensor([0, n], device="cuda")  # n is one past the end


# Each op with an index (or target) one past the end of what it indexes.
BAD_DATA = {
    "getitem": lambda x: x[_index(4)],
    "index_put": lambda x: x.index_put((_index(4),), ember.ones(2, 3, device="cuda")),
    "index_put_accumulate": lambda x: x.index_put((_index(4),), ember.ones(2, 3, device="cuda"),
                                                  accumulate=True),
    "embedding": lambda x: F.embedding(_index(4), x),
    "embedding_bag": lambda x: F.embedding_bag(_index(4), x, ember.tensor([0], device="cuda")),
    "index_select": lambda x: x.index_select(0, _index(4)),
    "index_add": lambda x: x.index_add(0, _index(4), ember.ones(2, 3, device="cuda")),
    "gather": lambda x: x.gather(1, ember.tensor([[0], [3], [1], [2]], device="cuda")),
    "scatter_add": lambda x: x.scatter_add(1, ember.tensor([[0], [3], [1], [2]], device="cuda"),
                                           ember.ones(4, 1, device="cuda")),
    "take": lambda x: x.take(_index(12)),
    "put": lambda x: x.put(_index(12), ember.ones(2, device="cuda")),
    "one_hot": lambda x: F.one_hot(_index(4), 4),
    "cross_entropy": lambda x: F.cross_entropy(x, ember.tensor([0, 3, 1, 2], device="cuda")),
    "nll_loss": lambda x: F.nll_loss(x, ember.tensor([0, 1, 2, 5], device="cuda")),
    "binary_cross_entropy": lambda x: F.binary_cross_entropy(
        x * 3, ember.zeros(4, 3, device="cuda")),
    "multi_margin_loss": lambda x: F.multi_margin_loss(x, ember.tensor([0, 3, 1, 2],
                                                                       device="cuda")),
    "masked_scatter": lambda x: x.masked_scatter(x > 0, ember.ones(11, device="cuda")),
    "bernoulli": lambda x: ember.bernoulli(x * 3),
    "multinomial_repeated_draws": lambda x: ember.multinomial(x - 0.6, 5, replacement=True),
}


@pytest.fixture
def x():
    with strict_cupy():
        yield ember.arange(12.0, device="cuda").reshape(4, 3).sigmoid()


@pytest.mark.parametrize("name", sorted(BAD_DATA))
def test_bad_data_fails_at_the_next_read_not_at_the_op(x, name):
    before = TRANSFERS.count
    out = BAD_DATA[name](x)
    assert TRANSFERS.count == before, "the check read the device"
    with pytest.raises(RuntimeError, match=ASSERTED):
        (out if out.dim() == 0 else out.sum()).item()
    # the flag is spent: the device works again, and a good op reads cleanly
    assert x.sum().item() == pytest.approx(float(x.cpu().sum()))


@pytest.mark.parametrize("name", ["getitem", "embedding", "cross_entropy"])
def test_bad_data_fails_at_synchronize(x, name):
    BAD_DATA[name](x)
    with pytest.raises(RuntimeError, match=ASSERTED):
        ember.cuda.synchronize()
    ember.cuda.synchronize()  # once raised, the flag is clear


def test_the_message_names_the_failed_assertion(x):
    F.embedding(_index(4), x)
    with pytest.raises(RuntimeError) as caught:
        x[0, 0].item()
    text = str(caught.value)
    assert text.startswith("CUDA error: device-side assert triggered\n")
    assert "srcIndex < srcSelectDimSize" in text and "CUDA_LAUNCH_BLOCKING=1" in text


def test_the_first_failed_assertion_is_the_one_reported(x):
    F.embedding(_index(4), x)
    F.nll_loss(x, ember.tensor([0, 1, 2, 5], device="cuda"))
    with pytest.raises(RuntimeError, match="srcIndex"):
        ember.cuda.synchronize()


def test_a_small_read_carries_the_flag_in_the_same_transfer(x):
    good = F.embedding(ember.tensor([0, 3], device="cuda"), x)
    loss = F.cross_entropy(good, ember.tensor([2, 0], device="cuda"))
    before = TRANSFERS.count
    value = loss.item()
    assert TRANSFERS.count - before == 1
    with ember.device("cpu"):
        expected = F.cross_entropy(F.embedding(ember.tensor([0, 3]), x.cpu()),
                                   ember.tensor([2, 0])).item()
    assert value == pytest.approx(expected)


@pytest.mark.parametrize("dtype", [ember.float32, ember.bool, ember.complex64, ember.bfloat16,
                                   ember.float8_e4m3fn])
def test_reads_with_a_pending_flag_keep_values_and_layout(x, dtype):
    F.embedding(ember.tensor([1], device="cuda"), x)  # a check that passes
    t = (x * 4).to(dtype).t()  # not contiguous
    assert t.cpu().tolist() == (x.cpu() * 4).to(dtype).t().tolist()


def test_a_large_read_checks_the_flag_on_its_own(x):
    big = ember.ones(300, 300, device="cuda")  # over the shared-read size
    F.embedding(_index(4), x)
    with pytest.raises(RuntimeError, match=ASSERTED):
        big.cpu()
    assert big.cpu().sum().item() == 90000


def test_cuda_launch_blocking_fails_at_the_op(x, monkeypatch):
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    with pytest.raises(RuntimeError, match=ASSERTED):
        F.embedding(_index(4), x)


def test_wrapped_indices_keep_every_scatter_inside_its_array(x):
    """Meanwhile the op computes with the index wrapped around, as CuPy's indexing does."""
    out = x.index_add(0, ember.tensor([4, -5], device="cuda"), ember.ones(2, 3, device="cuda"))
    with pytest.raises(RuntimeError, match=ASSERTED):
        out.cpu()
    expected = x.cpu().index_add(0, ember.tensor([0, 3]), ember.ones(2, 3))
    assert ember.equal(out.cpu(), expected)


def test_good_data_makes_no_read_and_no_error(x):
    before = TRANSFERS.count
    x[ember.tensor([0, 3], device="cuda")]
    x.gather(1, ember.tensor([[0], [2], [1], [2]], device="cuda"))
    F.one_hot(ember.tensor([0, 3], device="cuda"), 4)
    assert TRANSFERS.count == before
    ember.cuda.synchronize()


def test_printing_and_storage_reads_go_through_the_backend(x):
    t = ember.tensor([1.0, 2.0], device="cuda")
    assert repr(t) == "tensor([1., 2.], device='cuda:0')"
    F.embedding(_index(4), x)
    with pytest.raises(RuntimeError, match=ASSERTED):
        repr(t)
    F.embedding(_index(4), x)
    with pytest.raises(RuntimeError, match=ASSERTED):
        t.untyped_storage().tolist()
