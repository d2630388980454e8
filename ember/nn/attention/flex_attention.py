"""`torch.nn.attention.flex_attention`: attention whose scores a Python `score_mod` rewrites
and whose pattern a `mask_mod` (compressed into a BlockMask) restricts.

PyTorch compiles the mods into a block-sparse kernel; ember runs flex_attention eagerly, as
PyTorch's eager path does: the whole score matrix is computed, `score_mod` is applied to it,
and positions outside the mask get zero weight. The mods are called once on broadcasting
index tensors (b: (B,1,1,1), h: (1,H,1,1), q_idx: (1,1,L,1), kv_idx: (1,1,1,S)) rather than
once per element under vmap, which gives the same values for mods written with tensor
operations (comparisons, arithmetic, indexing other tensors by the indices). The BlockMask
keeps PyTorch's layout (per query block: how many key blocks are partly / fully unmasked
and which), so code that builds, slices or reads one sees PyTorch's tensors."""
import functools
import math
import operator
from typing import NamedTuple

from ... import dtypes as _dt
from ...ops import creation as _creation
from ...ops import ranges as _ranges
from .. import functional as F

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


class AuxRequest(NamedTuple):
    """Which auxiliary outputs `flex_attention(..., return_aux=)` returns."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    lse: object = None
    max_scores: object = None


def noop_mask(batch, head, token_q, token_kv):
    """A mask_mod that keeps every position."""
    return batch.new_ones(size=(), dtype=_dt.bool, device=batch.device)


def _identity(score, batch, head, token_q, token_kv):
    return score


def or_masks(*mask_mods):
    """A mask_mod keeping the positions any of `mask_mods` keeps."""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=_dt.bool)
        for mod in mask_mods:
            result = result | mod(b, h, q_idx, kv_idx)
        return result
    return or_mask


def and_masks(*mask_mods):
    """A mask_mod keeping the positions all of `mask_mods` keep."""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=_dt.bool)
        for mod in mask_mods:
            result = result & mod(b, h, q_idx, kv_idx)
        return result
    return and_mask


def _index_grid(B, H, Q, KV, device):
    """The four index tensors a mod is called with, shaped to broadcast to (B, H, Q, KV)."""
    def arange(n, shape):
        return _ranges.arange(n, device=device).reshape(shape)
    return (arange(B, (B, 1, 1, 1)), arange(H, (1, H, 1, 1)), arange(Q, (1, 1, Q, 1)),
            arange(KV, (1, 1, 1, KV)))


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device="cuda"):
    """The dense (B, H, Q_LEN, KV_LEN) mask of a mask_mod (bool), or the scores a score_mod
    makes of zeros (float): what the block mask or score_mod stands for."""
    B, H = B or 1, H or 1
    b, h, q, kv = _index_grid(B, H, Q_LEN, KV_LEN, device)
    if _is_score_mod(mod_fn):
        score = _creation.zeros(B, H, Q_LEN, KV_LEN, device=device)
        return mod_fn(score, b, h, q, kv).expand(B, H, Q_LEN, KV_LEN).contiguous()
    return mod_fn(b, h, q, kv).expand(B, H, Q_LEN, KV_LEN).contiguous()


def _is_score_mod(fn):
    """A score_mod takes five arguments (score first), a mask_mod four, as PyTorch tells them
    apart (functools.partial-wrapped mods included)."""
    import inspect
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.default is inspect.Parameter.empty]
    if len(params) not in (4, 5):
        raise AssertionError(f"mod_fn must take 4 or 5 arguments, got {len(params)}")
    return len(params) == 5


def _ordered_to_dense(num_blocks, indices, num_cols):
    """(…, rows) counts and (…, rows, entries) column lists -> the (…, rows, num_cols) 0/1
    int32 grid with a 1 at each listed column (only the first `count` entries count)."""
    entries = _ranges.arange(indices.shape[-1], device=indices.device)
    valid = entries < num_blocks.unsqueeze(-1)
    columns = indices.long().where(valid, num_cols)  # unused entries land in an extra column
    dense = indices.new_zeros(*indices.shape[:-1], num_cols + 1, dtype=_dt.int32)
    dense.scatter_(-1, columns, 1)
    return dense[..., :num_cols].contiguous()


def _dense_to_ordered(dense):
    dense = dense.to(_dt.int32)
    num_blocks = dense.sum(dim=-1).to(_dt.int32)
    indices = dense.argsort(dim=-1, descending=True, stable=True).to(_dt.int32)
    return num_blocks, indices


def _transpose_ordered(num_blocks, indices):
    dense = _ordered_to_dense(num_blocks, indices, indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


class BlockMask:
    """Which (Q_BLOCK_SIZE x KV_BLOCK_SIZE) tiles of the score matrix attention computes:
    per query block, `kv_num_blocks` tiles that need `mask_mod` (listed first in
    `kv_indices`) and `full_kv_num_blocks` tiles that are kept whole (`full_kv_indices`);
    `q_*` are the same by key block."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE, mask_mod, dq_write_order=None, dq_write_order_full=None,
                 dq_kv_order=None, dq_kv_order_spt=None):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod
        # deterministic-backward write orders of PyTorch's FLASH kernel: kept, never needed
        # by the eager computation
        self.dq_write_order, self.dq_write_order_full = dq_write_order, dq_write_order_full
        self.dq_kv_order, self.dq_kv_order_spt = dq_kv_order, dq_kv_order_spt

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod=None, seq_lengths=None, compute_q_blocks=True, *,
                       dq_write_order=None, dq_write_order_full=None, dq_kv_order=None):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both "
                                 "provided or omitted")
        q_num, q_idx, full_q_num, full_q_idx = None, None, None, None
        if compute_q_blocks:
            q_num, q_idx = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num, full_q_idx = _transpose_ordered(full_kv_num_blocks,
                                                             full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0],
                           kv_indices.shape[-1] * BLOCK_SIZE[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, bool) and \
                not hasattr(dq_kv_order, "shape"):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                   full_kv_indices, q_num, q_idx, full_q_num, full_q_idx, BLOCK_SIZE,
                   mask_mod if mask_mod is not None else noop_mask, dq_write_order,
                   dq_write_order_full,
                   None if isinstance(dq_kv_order, bool) else dq_kv_order,
                   dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten=True):
        block_size = self.BLOCK_SIZE if flatten else (self.BLOCK_SIZE,)
        seq_lengths = self.seq_lengths if flatten else (self.seq_lengths,)
        return (*seq_lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks,
                self.full_kv_indices, self.q_num_blocks, self.q_indices,
                self.full_q_num_blocks, self.full_q_indices, self.dq_write_order,
                self.dq_write_order_full, self.dq_kv_order, self.dq_kv_order_spt,
                *block_size, self.mask_mod)

    @property
    def shape(self):
        return tuple(self.kv_indices.shape[:-2]) + self.seq_lengths

    def numel(self):
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self):
        """The percentage of tiles not computed."""
        computed = self.kv_num_blocks.sum()
        if self.full_kv_num_blocks is not None:
            computed = computed + self.full_kv_num_blocks.sum()
        dense_ratio = computed.item() * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel()
        return 100 * (1 - dense_ratio)

    def to_dense(self):
        """The (…, q blocks, kv blocks) 0/1 grid of the tiles computed."""
        partial = _ordered_to_dense(self.kv_num_blocks, self.kv_indices,
                                    self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is None:
            return partial
        return partial | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                           self.full_kv_indices.shape[-1])

    def to(self, device):
        def move(x):
            return x.to(device) if hasattr(x, "to") and hasattr(x, "shape") else x
        fields = [move(getattr(self, name)) for name in (
            "kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
            "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices")]
        return type(self)(self.seq_lengths, *fields, self.BLOCK_SIZE, self.mask_mod,
                          move(self.dq_write_order), move(self.dq_write_order_full),
                          move(self.dq_kv_order), self.dq_kv_order_spt)

    def __repr__(self):
        def shape_or_none(x):
            return x.shape if x is not None else None
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (f"BlockMask(\n"
                f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
                f"    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape_or_none(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape_or_none(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape_or_none(self.q_num_blocks)},\n"
                f"    q_indices={shape_or_none(self.q_indices)},\n"
                f"    full_q_num_blocks={shape_or_none(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape_or_none(self.full_q_indices)},\n"
                f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={name}\n"
                f")")

    def _element_mask(self, B, H, L, S, device):
        """The (B, H, L, S) bool mask attention applies: tiles listed as full are kept
        whole, tiles listed as partial keep what mask_mod keeps, the rest is dropped."""
        q_block, kv_block = self.BLOCK_SIZE

        def spread(grid):  # tile grid -> element grid, cut to the sequences' lengths
            grid = grid.repeat_interleave(q_block, -2).repeat_interleave(kv_block, -1)
            return grid[..., :L, :S].to(_dt.bool)
        partial = spread(_ordered_to_dense(self.kv_num_blocks, self.kv_indices,
                                           self.kv_indices.shape[-1]))
        keep = partial & self.mask_mod(*_index_grid(B, H, L, S, device))
        if self.full_kv_num_blocks is not None:
            keep = keep | spread(_ordered_to_dense(self.full_kv_num_blocks,
                                                   self.full_kv_indices,
                                                   self.full_kv_indices.shape[-1]))
        return keep


def _convert_mask_to_block_mask(mask, Q_BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                                KV_BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                                separate_full_blocks=False):
    """A dense (B, H, Q, KV) bool mask -> per-tile (partial, full) int8 grids."""
    while mask.dim() < 4:
        mask = mask.unsqueeze(0)
    Q, KV = mask.shape[-2:]
    mask = F.pad(mask.to(_dt.int32), (0, -KV % KV_BLOCK_SIZE, 0, -Q % Q_BLOCK_SIZE))
    B, H, Q, KV = mask.shape
    tiles = mask.view(B, H, Q // Q_BLOCK_SIZE, Q_BLOCK_SIZE, KV // KV_BLOCK_SIZE,
                      KV_BLOCK_SIZE).permute(0, 1, 2, 4, 3, 5).sum(dim=[-2, -1])
    if not separate_full_blocks:
        return (tiles > 0).to(_dt.int8), None
    whole = Q_BLOCK_SIZE * KV_BLOCK_SIZE
    return ((tiles > 0) & (tiles < whole)).to(_dt.int8), (tiles == whole).to(_dt.int8)


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None,
                      BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile=False,
                      separate_full_blocks=True, compute_dq_write_order=False,
                      dq_kv_order=True):
    """The BlockMask of `mask_mod` over (B, H, Q_LEN, KV_LEN) (B, H None: 1, broadcast)."""
    if device is None:
        from ... import accelerator
        device = accelerator.current_accelerator() or "cpu"
    if _is_score_mod(mask_mod):
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(mask, q_block, kv_block, separate_full_blocks)
    kv_num, kv_idx = _dense_to_ordered(partial)
    full_num, full_idx = _dense_to_ordered(full) if full is not None else (None, None)
    return BlockMask.from_kv_blocks(kv_num, kv_idx, full_num, full_idx,
                                    BLOCK_SIZE=(q_block, kv_block), mask_mod=mask_mod,
                                    seq_lengths=(Q_LEN, KV_LEN), dq_kv_order=dq_kv_order)


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):
    """softmax(score_mod(q @ kᵀ · scale) restricted to block_mask) @ v, per batch and head.
    Query rows that the mask leaves empty give zeros (and a logsumexp of -inf)."""
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise ValueError(f"Expected query, key, and value to have the same dtype, but got "
                         f"query.dtype: {query.dtype}, key.dtype: {key.dtype}, and "
                         f"value.dtype: {value.dtype} instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"Expect query and key/value to have the same embedding dimension "
                         f"but got E={query.size(-1)} and E={key.size(-1)}.")
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is "
                         "deprecated, please use return_aux=AuxRequest(lse=True)")
    if return_lse:
        import warnings
        warnings.warn("return_lse is deprecated and will be removed in v2.10. Please use "
                      "return_aux=AuxRequest(lse=True) instead.", FutureWarning, stacklevel=2)
    B, Hq, L, E = query.shape
    Hkv, S = key.size(1), key.size(2)
    if Hq != Hkv:
        if not enable_gqa:
            raise ValueError(f"Expect query and key/value to have the same number of heads "
                             f"but got Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True "
                             f"for GQA.")
        if Hq % Hkv:
            raise ValueError(f"Expect number of query heads to be a multiple of kv heads for "
                             f"GQA but got Hq={Hq} and Hkv={Hkv}.")
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    if score_mod is not None:
        scores = score_mod(scores, *_index_grid(B, Hq, L, S, query.device))
    if block_mask is None:
        block_mask = create_block_mask(noop_mask, 1, 1, L, S, device=query.device)
    keep = block_mask._element_mask(B, Hq, L, S, query.device)
    scores = scores.masked_fill(~keep, float("-inf"))
    lse = scores.logsumexp(dim=-1)
    # an empty row would be 0/0: its weights are zeros, as in PyTorch's kernel
    weights = (scores - lse.unsqueeze(-1).masked_fill(lse.isinf().unsqueeze(-1), 0)).exp()
    out = weights @ value
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None,
                              max_scores=scores.amax(dim=-1) if return_aux.max_scores
                              else None)
    return (out, lse) if return_lse else out
