"""grad_fn graphs as PyTorch 2.13 records them: every printed tensor shows its grad_fn
(`tensor(0.69, grad_fn=<BinaryCrossEntropyWithLogitsBackward0>)`), so the node names and
the graph's shape below them (to depth 6) are part of the user-visible behaviour.

Each case runs the same call under ember and torch and compares the trees of node class
names (None edges skipped). Intentional deviations, kept for speed and pinned by
`test_intentional_deviations`:
- `einsum` is one EinsumBackward0 node (PyTorch records the permutes/views/bmm it lowers to);
- a broadcast batched `matmul` (4-d @ 4-d) is one MatmulBackward0 node under PyTorch's top
  UnsafeViewBackward0 (PyTorch: expand, view, bmm, unsafe view).
- nn.RNN, nn.GRU and nn.LSTM run one fused node per layer and direction (RnnLayerBackward0,
  GruLayerBackward0, LstmLayerBackward0) where ember's fused layer applies (float32/float64,
  no autocast or forward AD; switched off with backends.mkldnn, as PyTorch's oneDNN kernel).
  PyTorch's CPU build records every time step's cell ops for RNN and GRU (ember's composite
  path matches that node for node: test_rnn_layers_composite_path_graph_matches_pytorch),
  and for a float32 LSTM its oneDNN kernel's MkldnnRnnLayerBackward0, a name that says which
  kernel ran: float64, proj_size or oneDNN off give the cell ops, CUDA CudnnRnnBackward0.
  Above the fused node sit PyTorch's nodes (the states' StackBackward0, the directions'
  CatBackward0), except that batch_first turns the output round as a view
  (TransposeBackward0), not in place (PyTorch's RNN/GRU: TransposeBackward1), since the
  fused node saved that output for its backward.

Differences not fixed yet (so not in CASES): nn.MultiheadAttention's self-attention
(query is key is value) projection with need_weights=False (PyTorch: the packed projection's
unflatten/select/clone nodes; ember: a split; the attention above it matches), `x[i] = v`
(ember's CopySlices shows its inner copy node), kron, inner, linalg.multi_dot, dstack and
circular pad (PyTorch's views and copies in other orders).
"""
import numpy as np
import pytest

import ember
from tests._grad_fn_tree import grad_fn_tree


class _Inputs:
    """Same-valued inputs for either library, from one seeded generator per case."""

    def __init__(self, lib):
        self.lib = lib
        self.rng = np.random.default_rng(0)

    def __call__(self, *shape, grad=True, dtype=np.float32):
        return self.lib.tensor(self.rng.standard_normal(shape).astype(dtype), requires_grad=grad)

    def rand(self, *shape):
        return self.lib.tensor(self.rng.random(shape).astype(np.float32))

    def long(self, *values):
        return self.lib.tensor(list(values))


def _F(lib):
    return lib.nn.functional


# name -> function of (lib, T): each returns the tensor whose graph is compared
CASES = {
    # ---- losses (every nn.functional loss) ----
    "cross_entropy": lambda L, T: _F(L).cross_entropy(T(4, 5), T.long(1, 2, 3, 4)),
    "cross_entropy weight": lambda L, T: _F(L).cross_entropy(T(4, 5), T.long(1, 2, 3, 4),
                                                             weight=T.rand(5)),
    "cross_entropy probs": lambda L, T: _F(L).cross_entropy(
        T(4, 5), _F(L).softmax(T(4, 5, grad=False), -1)),
    "cross_entropy probs sum": lambda L, T: _F(L).cross_entropy(
        T(4, 5), _F(L).softmax(T(4, 5, grad=False), -1), reduction="sum"),
    "cross_entropy label smoothing": lambda L, T: _F(L).cross_entropy(
        T(4, 5), T.long(1, 2, 3, 4), label_smoothing=0.1),
    "cross_entropy label smoothing sum": lambda L, T: _F(L).cross_entropy(
        T(4, 5), T.long(1, 2, 3, 4), label_smoothing=0.1, reduction="sum"),
    "nll_loss": lambda L, T: _F(L).nll_loss(T(4, 5), T.long(1, 2, 3, 4)),
    "nll_loss 2d": lambda L, T: _F(L).nll_loss(T(2, 3, 2, 2), L.tensor([[[0, 1], [2, 0]]] * 2)),
    "mse_loss": lambda L, T: _F(L).mse_loss(T(4), T(4, grad=False)),
    "l1_loss": lambda L, T: _F(L).l1_loss(T(4), T(4, grad=False)),
    "smooth_l1_loss": lambda L, T: _F(L).smooth_l1_loss(T(4), T(4, grad=False)),
    "huber_loss": lambda L, T: _F(L).huber_loss(T(4), T(4, grad=False)),
    "binary_cross_entropy": lambda L, T: _F(L).binary_cross_entropy(L.sigmoid(T(4)), T.rand(4)),
    "bce_with_logits": lambda L, T: _F(L).binary_cross_entropy_with_logits(T(4), T.rand(4)),
    "bce_with_logits none": lambda L, T: _F(L).binary_cross_entropy_with_logits(
        T(4), T.rand(4), reduction="none"),
    "bce_with_logits weights": lambda L, T: _F(L).binary_cross_entropy_with_logits(
        T(2, 4), T.rand(2, 4), weight=T.rand(4), pos_weight=T.rand(4), reduction="sum"),
    "kl_div": lambda L, T: _F(L).kl_div(T(4), T.rand(4), reduction="batchmean"),
    "kl_div log_target": lambda L, T: _F(L).kl_div(T(4), T(4, grad=False), reduction="sum",
                                                   log_target=True),
    "poisson_nll_loss": lambda L, T: _F(L).poisson_nll_loss(T(4), T.rand(4)),
    "gaussian_nll_loss": lambda L, T: _F(L).gaussian_nll_loss(T(4), T(4, grad=False),
                                                              T.rand(4) + 0.1),
    "margin_ranking_loss": lambda L, T: _F(L).margin_ranking_loss(
        T(3), T(3), L.tensor([1., -1., 1.])),
    "hinge_embedding_loss": lambda L, T: _F(L).hinge_embedding_loss(
        T(3), L.tensor([1., -1., 1.])),
    "soft_margin_loss": lambda L, T: _F(L).soft_margin_loss(T(3), L.tensor([1., -1., 1.])),
    "multilabel_soft_margin_loss": lambda L, T: _F(L).multilabel_soft_margin_loss(
        T(2, 3), L.tensor([[1., 0, 1], [0, 1, 0]])),
    "multilabel_margin_loss": lambda L, T: _F(L).multilabel_margin_loss(
        T(2, 3), L.tensor([[1, 0, -1], [2, -1, 0]])),
    "multi_margin_loss": lambda L, T: _F(L).multi_margin_loss(T(2, 3), T.long(1, 2)),
    "cosine_embedding_loss": lambda L, T: _F(L).cosine_embedding_loss(
        T(2, 3), T(2, 3), L.tensor([1., -1.])),
    "triplet_margin_loss": lambda L, T: _F(L).triplet_margin_loss(T(2, 3), T(2, 3), T(2, 3)),
    "triplet_margin_loss swap": lambda L, T: _F(L).triplet_margin_loss(
        T(2, 3), T(2, 3), T(2, 3), swap=True),
    "triplet_margin_with_distance_loss": lambda L, T: _F(L).triplet_margin_with_distance_loss(
        T(2, 3), T(2, 3), T(2, 3)),
    "ctc_loss": lambda L, T: _F(L).ctc_loss(_F(L).log_softmax(T(6, 1, 4), 2),
                                            L.tensor([[1, 2]]), L.tensor([6]), L.tensor([2])),
    "ctc_loss sum": lambda L, T: _F(L).ctc_loss(
        _F(L).log_softmax(T(6, 2, 4), 2), L.tensor([[1, 2], [3, 3]]), L.tensor([6, 5]),
        L.tensor([2, 2]), reduction="sum"),
    # ---- activations ----
    **{f"{name}": (lambda name: lambda L, T: getattr(_F(L), name)(T(3)))(name) for name in (
        "relu", "relu6", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "softsign",
        "hardtanh", "hardswish", "hardsigmoid", "leaky_relu", "logsigmoid", "tanhshrink",
        "softshrink", "hardshrink", "sigmoid", "tanh")},
    "gelu tanh": lambda L, T: _F(L).gelu(T(3), approximate="tanh"),
    "threshold": lambda L, T: _F(L).threshold(T(3), 0.1, 2.0),
    "rrelu eval": lambda L, T: _F(L).rrelu(T(3), training=False),
    "glu": lambda L, T: _F(L).glu(T(2, 4)),
    "prelu": lambda L, T: _F(L).prelu(T(3), T(1)),
    "softmax": lambda L, T: _F(L).softmax(T(2, 3), -1),
    "log_softmax": lambda L, T: _F(L).log_softmax(T(2, 3), -1),
    "softmin": lambda L, T: _F(L).softmin(T(2, 3), -1),
    "dropout eval": lambda L, T: _F(L).dropout(T(3), training=False),
    # ---- normalisation ----
    "batch_norm": lambda L, T: L.nn.BatchNorm2d(3)(T(2, 3, 4, 4)),
    "batch_norm 1d": lambda L, T: L.nn.BatchNorm1d(3)(T(4, 3)),
    "layer_norm": lambda L, T: L.nn.LayerNorm(4)(T(2, 3, 4)),
    "group_norm": lambda L, T: L.nn.GroupNorm(2, 4)(T(2, 4, 3)),
    "instance_norm affine": lambda L, T: L.nn.InstanceNorm2d(3, affine=True)(T(2, 3, 4, 4)),
    "instance_norm": lambda L, T: _F(L).instance_norm(T(2, 3, 4)),
    "rms_norm": lambda L, T: L.nn.RMSNorm(4)(T(2, 3, 4)),
    "rms_norm no weight": lambda L, T: _F(L).rms_norm(T(2, 3, 4), (4,)),
    "local_response_norm": lambda L, T: _F(L).local_response_norm(T(1, 4, 3, 3), 2),
    "normalize": lambda L, T: _F(L).normalize(T(2, 3)),
    "cosine_similarity": lambda L, T: _F(L).cosine_similarity(T(2, 3), T(2, 3)),
    "cosine_similarity broadcast": lambda L, T: _F(L).cosine_similarity(T(2, 3), T(1, 3)),
    "pairwise_distance": lambda L, T: _F(L).pairwise_distance(T(2, 3), T(2, 3)),
    # ---- pooling ----
    "max_pool2d": lambda L, T: _F(L).max_pool2d(T(2, 3, 4, 4), 2),
    "max_pool1d": lambda L, T: _F(L).max_pool1d(T(2, 3, 4), 2),
    "avg_pool2d": lambda L, T: _F(L).avg_pool2d(T(2, 3, 4, 4), 2),
    "avg_pool1d": lambda L, T: _F(L).avg_pool1d(T(2, 3, 4), 2),
    "adaptive_avg_pool2d": lambda L, T: _F(L).adaptive_avg_pool2d(T(2, 3, 4, 4), 1),
    "adaptive_max_pool2d": lambda L, T: _F(L).adaptive_max_pool2d(T(2, 3, 4, 4), 1),
    "lp_pool2d": lambda L, T: _F(L).lp_pool2d(T(1, 2, 4, 4), 2, 2),
    # ---- layers ----
    "conv2d": lambda L, T: L.nn.Conv2d(3, 4, 3)(T(2, 3, 8, 8)),
    "conv_transpose2d": lambda L, T: L.nn.ConvTranspose2d(3, 4, 3)(T(2, 3, 8, 8)),
    "linear": lambda L, T: L.nn.Linear(3, 2)(T(4, 3)),
    "embedding": lambda L, T: _F(L).embedding(L.tensor([1, 2]), T(4, 3)),
    "embedding_bag": lambda L, T: L.nn.EmbeddingBag(10, 4)(L.tensor([[1, 2], [3, 4]])),
    "pad": lambda L, T: _F(L).pad(T(2, 3), (1, 1)),
    "interpolate nearest": lambda L, T: _F(L).interpolate(T(1, 1, 4, 4), scale_factor=2),
    "interpolate bilinear": lambda L, T: _F(L).interpolate(T(1, 1, 4, 4), scale_factor=2,
                                                           mode="bilinear"),
    "scaled_dot_product_attention": lambda L, T: _F(L).scaled_dot_product_attention(
        T(2, 2, 4, 3), T(2, 2, 4, 3), T(2, 2, 4, 3)),
    "pixel_shuffle": lambda L, T: _F(L).pixel_shuffle(T(1, 4, 2, 2), 2),
    "unfold": lambda L, T: _F(L).unfold(T(1, 2, 4, 4), 2),
    # ---- the RNN family's cells (their layers: RNN_LAYERS) ----
    "rnn_cell": lambda L, T: L.nn.RNNCell(3, 4)(T(2, 3)),
    "rnn_cell relu": lambda L, T: L.nn.RNNCell(3, 4, nonlinearity="relu")(T(2, 3), T(2, 4)),
    "gru_cell": lambda L, T: L.nn.GRUCell(3, 4)(T(2, 3)),
    "gru_cell no bias": lambda L, T: L.nn.GRUCell(3, 4, bias=False)(T(2, 3), T(2, 4)),
    "lstm_cell": lambda L, T: L.nn.LSTMCell(3, 4)(T(2, 3))[0],
    "lstm_cell c": lambda L, T: L.nn.LSTMCell(3, 4)(T(2, 3), (T(2, 4), T(2, 4)))[1],
    # ---- tensor methods ----
    "t 1-d": lambda L, T: T(3).t(),
    "t 2-d": lambda L, T: T(2, 3).t(),
    "roll without dims": lambda L, T: T(2, 3).roll(1),
    "roll dims": lambda L, T: T(2, 3).roll(1, 0),
    "remainder": lambda L, T: T(3).remainder(T(3)),
    "remainder number": lambda L, T: T(3).remainder(2),
    "sum": lambda L, T: T(2, 3).sum(), "mean dim": lambda L, T: T(2, 3).mean(1),
    "var": lambda L, T: T(2, 3).var(1), "std": lambda L, T: T(2, 3).std(),
    "norm": lambda L, T: T(2, 3).norm(), "norm dim": lambda L, T: T(2, 3).norm(2, -1),
    "vector_norm": lambda L, T: L.linalg.vector_norm(T(2, 3)),
    "clamp": lambda L, T: T(3).clamp(-0.5, 0.5), "clamp_min": lambda L, T: T(3).clamp_min(0),
    "clamp min=": lambda L, T: T(3).clamp(min=0),
    "where": lambda L, T: L.where(T(3, grad=False) > 0, T(3), T(3)),
    "cat": lambda L, T: L.cat([T(2), T(3)]), "stack": lambda L, T: L.stack([T(2), T(2)]),
    "chunk": lambda L, T: T(4).chunk(2)[0], "split": lambda L, T: T(4).split(2)[1],
    "unbind": lambda L, T: T(2, 3).unbind()[0],
    "index": lambda L, T: T(4, 3)[L.tensor([0, 2])],
    "mask": lambda L, T: T(4)[L.tensor([True, False, True, False])],
    "slice": lambda L, T: T(4, 3)[1:, ::2], "expand": lambda L, T: T(1, 3).expand(2, 3),
    "flatten": lambda L, T: L.flatten(T(2, 3, 4), 1),
    "logsumexp": lambda L, T: T(2, 3).logsumexp(1), "cumsum": lambda L, T: T(4).cumsum(0),
    "topk": lambda L, T: T(5).topk(2)[0], "sort": lambda L, T: T(5).sort()[0],
    "max dim": lambda L, T: T(2, 3).max(1)[0], "amax": lambda L, T: T(2, 3).amax(1),
    "prod": lambda L, T: T(3).prod(), "pow": lambda L, T: T(3) ** 2,
    "sqrt": lambda L, T: T(3).abs().sqrt(), "div number": lambda L, T: T(3) / 2,
    "rsub number": lambda L, T: 1 - T(3), "neg": lambda L, T: -T(3),
    "mul number": lambda L, T: T(3) * 2, "add number": lambda L, T: T(3) + 1,
    "matmul 2d": lambda L, T: T(2, 3) @ T(3, 4),
    "baddbmm": lambda L, T: L.baddbmm(T(2, 3, 5), T(2, 3, 4), T(2, 4, 5)),
    "double": lambda L, T: T(3).double(), "half float": lambda L, T: T(3).half().float(),
    "one_hot mul": lambda L, T: _F(L).one_hot(L.tensor([0, 1]), 3).float() * T(2, 3),
    "x1": lambda L, T: T(2, 3).exp().log().sin().cos().abs().sqrt().reciprocal(),
    "x2": lambda L, T: T(2, 3).sigmoid().tanh().relu().neg().square().rsqrt(),
    "x3": lambda L, T: T(2, 3).expm1().log1p().atan().sinh().floor() + T(2, 3).frac(),
    "x4": lambda L, T: T(2, 3).mean() * T(2, 3).var(0).sum() - T(3).std(0, keepdim=True),
    "x5": lambda L, T: T(2, 3).min() + T(2, 3).max() + T(2, 3).min(0)[0].sum(),
    "x6": lambda L, T: T(2, 3).cumprod(1) + T(2, 3).cummax(1)[0] + T(2, 3).logcumsumexp(1),
    "x7": lambda L, T: T(2, 3).permute(1, 0).reshape(6).view(3, 2).contiguous().squeeze(),
    "x8": lambda L, T: T(2, 1, 3).squeeze(1).unsqueeze(0).transpose(0, 2).flip(0).narrow(0, 1, 2),
    "x9": lambda L, T: T(2, 3).gather(1, L.tensor([[0], [2]])) + T(2, 3).index_select(1, L.tensor([1])),
    "x10": lambda L, T: T(3, 3).tril() + T(3, 3).triu(1) + T(3, 3).diag().diag_embed(),
    "x11": lambda L, T: T(2, 3).masked_fill(L.tensor([[True, False, True]] * 2), 0.5),
    "x12": lambda L, T: T(2, 3).repeat(2, 1) + T(4, 3).clone(),
    "x13": lambda L, T: L.maximum(T(3), T(3)) * L.minimum(T(3), T(3)) + L.lerp(T(3), T(3), 0.3),
    "x14": lambda L, T: L.addcmul(T(3), T(3), T(3), value=0.5) + L.addcdiv(T(3), T(3), T(3).exp()),
    "x15": lambda L, T: T(3).pow(T(3).abs()) + T(3).abs().pow(0.5) + 2 ** T(3),
    "x16": lambda L, T: T(2, 3).softmax(-1).log() + T(2, 3).log_softmax(0),
    "x17": lambda L, T: T(2, 3) @ T(3) + T(3).dot(T(3)) + (T(2, 3).mm(T(3, 2))).trace(),
    "x18": lambda L, T: L.bmm(T(2, 2, 3), T(2, 3, 2)) + L.addmm(T(2), T(2, 3), T(3, 2)),
    "x19": lambda L, T: T(2, 3).split([1, 2], 1)[1].sum(1) + T(4).unflatten(0, (2, 2)).sum(0),
    "x20": lambda L, T: T(4, 3)[1:3, None, ..., 0] * 2,
    "x21": lambda L, T: L.cdist(T(2, 3), T(4, 3)),
    "x22": lambda L, T: T(2, 3).abs().amax(1) - T(2, 3).amin(0).sum(),
    "x23": lambda L, T: T(2, 3).median() + T(2, 3).kthvalue(2, 1)[0].sum() + T(5).quantile(0.3),
    "x24": lambda L, T: T(3).clamp(max=0.5) + T(3).clamp_max(0.1) + T(3).clip(-1, 1),
    "x25": lambda L, T: T(3).sub(T(3), alpha=2) + T(3).add(T(3), alpha=0.5) + T(3).div(T(3)),
    "x26": lambda L, T: T(2, 3).expand_as(T(4, 2, 3)).sum((0, 1)) + T(3).type_as(T(3)),
    "x27": lambda L, T: T(2, 3).new_zeros(2, 3) + T(2, 3).detach() + T(2, 3).to(L.float64).float(),
    # ---- more functional calls ----
    "nll_loss ignore": lambda L, T: _F(L).nll_loss(T(4, 5), T.long(1, -100, 3, 4)),
    "cross_entropy weight smoothing": lambda L, T: _F(L).cross_entropy(
        T(4, 5), T.long(1, 2, 3, 4), weight=T.rand(5), label_smoothing=0.2),
    "cross_entropy 1-d": lambda L, T: _F(L).cross_entropy(T(5), L.tensor(2)),
    "mse_loss none": lambda L, T: _F(L).mse_loss(T(4), T(4, grad=False), reduction="none"),
    "l1_loss sum": lambda L, T: _F(L).l1_loss(T(4), T(4), reduction="sum"),
    "binary_cross_entropy weight": lambda L, T: _F(L).binary_cross_entropy(
        L.sigmoid(T(2, 4)), T.rand(2, 4), weight=T.rand(4)),
    "kl_div mean": lambda L, T: _F(L).kl_div(T(4), T.rand(4), reduction="sum"),
    "poisson_nll_loss full": lambda L, T: _F(L).poisson_nll_loss(T(4).exp(), T.rand(4) * 3,
                                                                 log_input=False, full=True),
    "gaussian_nll_loss full": lambda L, T: _F(L).gaussian_nll_loss(
        T(4), T(4), T.rand(4) + 0.1, full=True, reduction="sum"),
    "margin_ranking_loss margin": lambda L, T: _F(L).margin_ranking_loss(
        T(3), T(3), L.tensor([1., -1., 1.]), margin=0.3, reduction="none"),
    "cosine_embedding_loss margin": lambda L, T: _F(L).cosine_embedding_loss(
        T(2, 3), T(2, 3), L.tensor([1., -1.]), margin=0.2, reduction="sum"),
    "triplet_margin_loss p1": lambda L, T: _F(L).triplet_margin_loss(
        T(2, 3), T(2, 3), T(2, 3), p=1, margin=0.5, reduction="none"),
    "pairwise_distance keepdim": lambda L, T: _F(L).pairwise_distance(T(2, 3), T(3), p=3,
                                                                      keepdim=True),
    "softmax dtype": lambda L, T: _F(L).softmax(T(2, 3), 1, dtype=L.float64),
    "gumbel-free log_softmax 3d": lambda L, T: _F(L).log_softmax(T(2, 3, 4), 1),
    "batch_norm eval": lambda L, T: L.nn.BatchNorm1d(3).eval()(T(4, 3)),
    "layer_norm no affine": lambda L, T: _F(L).layer_norm(T(2, 4), (4,)),
    "group_norm no affine": lambda L, T: _F(L).group_norm(T(2, 4, 3), 2),
    "max_pool3d": lambda L, T: _F(L).max_pool3d(T(1, 2, 4, 4, 4), 2),
    "max_pool2d indices": lambda L, T: _F(L).max_pool2d(T(1, 2, 4, 4), 2, return_indices=True)[0],
    "avg_pool3d": lambda L, T: _F(L).avg_pool3d(T(1, 2, 4, 4, 4), 2),
    "adaptive_avg_pool1d": lambda L, T: _F(L).adaptive_avg_pool1d(T(2, 3, 5), 2),
    "adaptive_max_pool1d": lambda L, T: _F(L).adaptive_max_pool1d(T(2, 3, 5), 2),
    "lp_pool1d": lambda L, T: _F(L).lp_pool1d(T(1, 2, 4), 3, 2),
    "conv1d": lambda L, T: _F(L).conv1d(T(2, 3, 8), T(4, 3, 3), T(4)),
    "conv3d": lambda L, T: _F(L).conv3d(T(1, 2, 4, 4, 4), T(3, 2, 2, 2, 2)),
    "conv_transpose1d": lambda L, T: _F(L).conv_transpose1d(T(2, 3, 5), T(3, 4, 3)),
    "bilinear": lambda L, T: _F(L).bilinear(T(2, 3), T(2, 4), T(5, 3, 4), T(5)),
    "linear no bias": lambda L, T: _F(L).linear(T(2, 3, 4), T(5, 4)),
    "linear 3-d": lambda L, T: _F(L).linear(T(2, 3, 4), T(5, 4), T(5)),
    "sdpa causal": lambda L, T: _F(L).scaled_dot_product_attention(
        T(2, 2, 4, 3), T(2, 2, 4, 3), T(2, 2, 4, 3), is_causal=True),
    "pixel_unshuffle": lambda L, T: _F(L).pixel_unshuffle(T(1, 1, 4, 4), 2),
    "fold": lambda L, T: _F(L).fold(T(1, 8, 9), (4, 4), 2),
    "grid_sample": lambda L, T: _F(L).grid_sample(T(1, 1, 4, 4), T(1, 3, 3, 2),
                                                  align_corners=False),
    "affine_grid": lambda L, T: _F(L).affine_grid(T(1, 2, 3), (1, 1, 3, 3), align_corners=False),
    "interpolate bicubic": lambda L, T: _F(L).interpolate(T(1, 1, 4, 4), size=(6, 6),
                                                          mode="bicubic", align_corners=True),
    "interpolate linear": lambda L, T: _F(L).interpolate(T(1, 2, 4), scale_factor=2,
                                                         mode="linear"),
    "interpolate area": lambda L, T: _F(L).interpolate(T(1, 1, 4, 4), size=(2, 2), mode="area"),
    "interpolate nearest-exact": lambda L, T: _F(L).interpolate(T(1, 1, 4, 4), size=(3, 3),
                                                                mode="nearest-exact"),
    "embedding padding_idx": lambda L, T: _F(L).embedding(L.tensor([1, 0]), T(4, 3),
                                                          padding_idx=0),
    "one_hot embedding_bag mean": lambda L, T: _F(L).embedding_bag(
        L.tensor([1, 2, 3, 0]), T(4, 3), L.tensor([0, 2]), mode="max"),
    "glu dim": lambda L, T: _F(L).glu(T(4, 2), 0),
    "hardtanh range": lambda L, T: _F(L).hardtanh(T(3), -0.5, 0.5),
    "elu alpha": lambda L, T: _F(L).elu(T(3), alpha=0.5),
    "leaky_relu slope": lambda L, T: _F(L).leaky_relu(T(3), 0.2),
    "softplus beta": lambda L, T: _F(L).softplus(T(3), beta=2, threshold=5),
    "normalize p1": lambda L, T: _F(L).normalize(T(2, 3), p=1, dim=0),
    "alpha_dropout eval": lambda L, T: _F(L).alpha_dropout(T(3), training=False),
    "dropout2d eval": lambda L, T: _F(L).dropout2d(T(1, 2, 3, 3), training=False),
    "mha": lambda L, T: L.nn.MultiheadAttention(4, 2, batch_first=True)(T(2, 3, 4), T(2, 3, 4),
                                                                        T(2, 3, 4))[0],
    "mha cross no weights": lambda L, T: L.nn.MultiheadAttention(4, 2, batch_first=True)(
        T(2, 3, 4), T(2, 5, 4), T(2, 5, 4), need_weights=False)[0],
    "mha causal no weights": lambda L, T: L.nn.MultiheadAttention(4, 2)(
        T(3, 2, 4), T(3, 2, 4), T(3, 2, 4), need_weights=False, is_causal=True,
        attn_mask=L.nn.Transformer.generate_square_subsequent_mask(3))[0],
    "T 2-d": lambda L, T: T(2, 3).T, "outer": lambda L, T: L.outer(T(2), T(3)),
    "matmul 1-d 2-d": lambda L, T: T(3) @ T(3, 2),
    "take_along_dim": lambda L, T: L.take_along_dim(T(2, 3), L.tensor([[0], [1]]), 1),
    "repeat_interleave int": lambda L, T: T(2, 3).repeat_interleave(2, dim=1),
    "repeat_interleave flat": lambda L, T: T(2, 3).repeat_interleave(2),
    "repeat_interleave tensor": lambda L, T: T(2, 3).repeat_interleave(L.tensor([1, 2]), dim=0),
    "smooth_l1_loss beta 0": lambda L, T: _F(L).smooth_l1_loss(T(3), T(3), beta=0.0),
    "trapezoid": lambda L, T: L.trapezoid(T(4)), "trace": lambda L, T: T(3, 3).trace(),
    "diag 2-d": lambda L, T: T(3, 3).diag(1), "diag 1-d": lambda L, T: T(3).diag(),
    "transformer encoder layer": lambda L, T: L.nn.TransformerEncoderLayer(
        4, 2, 8, dropout=0.0, batch_first=True)(T(2, 3, 4)),
}


# (module, keywords, which output): every layer of the family, its output and final states
RNN_LAYERS = [(mode, kw, out) for mode in ("RNN", "GRU", "LSTM")
              for kw in ({}, {"batch_first": True}, {"num_layers": 2, "bidirectional": True},
                         {"bias": False})
              for out in ("output", "h_n")] + [("LSTM", {"proj_size": 2}, "output"),
                                               ("LSTM", {}, "c_n")]


def _rnn_layer(lib, mode, kw, which):
    T = _Inputs(lib)
    m = getattr(lib.nn, mode)(3, 4, **kw)
    out, state = m(T(2, 5, 3) if kw.get("batch_first") else T(5, 2, 3))
    return {"output": out, "h_n": state[0] if mode == "LSTM" else state,
            "c_n": state[1] if mode == "LSTM" else None}[which]


@pytest.mark.parametrize("mode,kw,which", RNN_LAYERS)
def test_rnn_layers_composite_path_graph_matches_pytorch(torch, mode, kw, which):
    """With the fused kernels switched off (PyTorch's oneDNN, ember's fused layer alike),
    every time step's cell ops, as PyTorch's CPU build records them."""
    trees = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        with lib.backends.mkldnn.flags(enabled=False):
            trees.append(grad_fn_tree(_rnn_layer(lib, mode, kw, which)))
    assert trees[0] == trees[1]


def test_rnn_layers_fused_path_nodes():
    """The fused layer (the default where it applies): one node per layer and direction,
    under what PyTorch puts on top (batch_first's transpose, the states' stack)."""
    def top(mode, kw, which):
        t = _rnn_layer(ember, mode, kw, which)
        return [type(t.grad_fn).__name__] + [type(n).__name__ for n, _ in
                                             t.grad_fn.next_functions if n is not None]
    assert top("GRU", {}, "output")[0] == "GruLayerBackward0"
    assert top("RNN", {}, "h_n") == ["StackBackward0", "RnnLayerBackward0"]
    # the fused layer saved its output for backward: turned round as a view, not in place
    assert top("GRU", {"batch_first": True}, "output") == ["TransposeBackward0",
                                                            "GruLayerBackward0"]
    assert top("LSTM", {"num_layers": 2, "bidirectional": True}, "output") == \
        ["CatBackward0", "LstmLayerBackward0", "LstmLayerBackward0"]


@pytest.mark.parametrize("name", list(CASES))
def test_graph_matches_pytorch(torch, name):
    trees = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        trees.append(grad_fn_tree(CASES[name](lib, _Inputs(lib))))
    assert trees[0] == trees[1]


def test_intentional_deviations():
    """Kept for speed (see the module's docstring): one node where PyTorch records several."""
    T = _Inputs(ember)
    assert type(ember.einsum("ij,jk->ik", T(2, 3), T(3, 4)).grad_fn).__name__ == \
        "EinsumBackward0"
    top = (T(2, 2, 3, 4) @ T(2, 2, 4, 5)).grad_fn
    assert type(top).__name__ == "UnsafeViewBackward0"
    assert type(top.next_functions[0][0]).__name__ == "MatmulBackward0"
    out = ember.nn.LSTM(3, 4)(T(5, 2, 3))[0]
    assert type(out.grad_fn).__name__ == "LstmLayerBackward0"
