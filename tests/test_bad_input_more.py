"""More wrong calls, answered as PyTorch answers them: nn modules (recurrent, normalisation,
attention, convolution, pooling, resizing, padding, containers), tensor ops (indexing, views,
splits, sorting, in-place casts, creation and random draws), autograd (hooks, root gradients),
schedulers, optimisers and the data utilities. Same form and comparison as test_bad_input.py:
each case is a function of the library (`t` is torch or ember)."""
import pytest

from tests.test_bad_input import assert_answered_as_pytorch

# The exception type only: the message names a class by its module path (EmbeddingBag's
# offsets), or is Python's own wording of a missing argument where PyTorch lists overloads.
TYPE_ONLY = {"embeddingbag_offsets_2d", "cumsum_nodim", "linspace_nosteps"}


def F(t):
    return t.nn.functional


def D(t):
    return t.utils.data


CASES = {
    "rnn_input_size": lambda t: t.nn.RNN(3, 4)(t.ones(5, 2, 7)),
    "lstm_c0_shape": lambda t: t.nn.LSTM(
        3, 4)(t.ones(5, 2, 3), (t.zeros(1, 2, 4), t.zeros(1, 2, 5))),
    "lstm_h_tensor": lambda t: t.nn.LSTM(3, 4)(t.ones(5, 2, 3), t.zeros(1, 2, 4)),
    "rnn_nonlin_bad": lambda t: t.nn.RNN(3, 4, nonlinearity="sigmoid"),
    "lstm_batch_first_h0": lambda t: t.nn.LSTM(
        3, 4, batch_first=True)(t.ones(2, 5, 3), (t.zeros(1, 5, 4), t.zeros(1, 5, 4))),
    "lstmcell_hx": lambda t: t.nn.LSTMCell(3, 4)(t.ones(2, 3), (t.zeros(2, 5), t.zeros(2, 4))),
    "bn1d_channels": lambda t: t.nn.BatchNorm1d(3)(t.ones(2, 4)),
    "bn2d_single_train": lambda t: t.nn.BatchNorm2d(3)(t.ones(1, 3, 1, 1)),
    "groupnorm_channels": lambda t: t.nn.GroupNorm(2, 4)(t.ones(2, 6, 3)),
    "mha_kdim": lambda t: t.nn.MultiheadAttention(
        8, 2)(t.ones(3, 2, 8), t.ones(4, 2, 8), t.ones(5, 2, 8)),
    "mha_attn_mask_shape": lambda t: t.nn.MultiheadAttention(8, 2)(
        t.ones(3, 2, 8), t.ones(4, 2, 8), t.ones(4, 2, 8), attn_mask=t.ones(3, 3, dtype=t.bool)),
    "mha_kpm_shape": lambda t: t.nn.MultiheadAttention(8, 2)(
        t.ones(3, 2, 8), t.ones(4, 2, 8), t.ones(4, 2, 8),
        key_padding_mask=t.ones(2, 3, dtype=t.bool)),
    "mha_batch_first_mix": lambda t: t.nn.MultiheadAttention(
        8, 2, batch_first=True)(t.ones(2, 3, 8), t.ones(3, 2, 8), t.ones(3, 2, 8)),
    "tdl_memory": lambda t: t.nn.TransformerDecoderLayer(8, 2)(t.ones(4, 2, 8), t.ones(5, 2, 6)),
    "transformer_batch": lambda t: t.nn.Transformer(
        8, 2, 1, 1, 16)(t.ones(4, 2, 8), t.ones(5, 3, 8)),
    "sdpa_mask_shape": lambda t: F(t).scaled_dot_product_attention(
        t.ones(2, 3, 4), t.ones(2, 5, 4), t.ones(2, 5, 4), attn_mask=t.ones(3, 4)),
    "embedding_padding_neg_oob": lambda t: t.nn.Embedding(5, 2, padding_idx=-7),
    "embeddingbag_offsets_2d": lambda t: t.nn.EmbeddingBag(5, 2)(t.tensor([[1, 2]]), t.tensor([0])),
    "conv1d_rank": lambda t: t.nn.Conv1d(3, 4, 3)(t.ones(1, 3, 5, 5)),
    "conv3d_rank": lambda t: t.nn.Conv3d(3, 4, 3)(t.ones(1, 3, 5, 5)),
    "conv1d_same_stride": lambda t: t.nn.Conv1d(4, 6, 3, stride=2, padding="same"),
    "conv1d_dilation_zero": lambda t: F(t).conv1d(t.ones(1, 3, 8), t.ones(4, 3, 3), dilation=0),
    "convT1d_output_padding": lambda t: t.nn.ConvTranspose1d(
        3, 4, 3, stride=2, output_padding=2)(t.ones(1, 3, 5)),
    "convT2d_output_size_bad": lambda t: t.nn.ConvTranspose2d(
        3, 4, 3, stride=2)(t.ones(1, 3, 5, 5), output_size=[20, 20]),
    "maxpool1d_small": lambda t: t.nn.MaxPool1d(5)(t.ones(1, 1, 3)),
    "maxpool3d_rank": lambda t: t.nn.MaxPool3d(2)(t.ones(1, 4, 4)),
    "interp_nearest_align": lambda t: F(
        t).interpolate(t.ones(1, 1, 4, 4), size=2, mode="nearest", align_corners=True),
    "interp_bilinear_3d": lambda t: F(t).interpolate(t.ones(1, 1, 4), size=2, mode="bilinear"),
    "upsample_both": lambda t: t.nn.Upsample(size=2, scale_factor=2)(t.ones(1, 1, 4, 4)),
    "pad_odd3": lambda t: F(t).pad(t.ones(1, 4), (1, 2, 3)),
    "pad_reflect_big": lambda t: F(t).pad(t.ones(1, 1, 4), (4, 4), mode="reflect"),
    "pad_reflect_big2d": lambda t: F(t).pad(t.ones(1, 1, 4, 4), (1, 1, 4, 4), mode="reflect"),
    "dropout_neg": lambda t: t.nn.Dropout(-0.1),
    "F_dropout_p": lambda t: F(t).dropout(t.ones(3), p=2.0),
    "flatten_module_end": lambda t: t.nn.Flatten(0, 5)(t.ones(2, 3)),
    "unflatten_neg_two": lambda t: t.nn.Unflatten(1, (-1, -1))(t.ones(2, 6)),
    "unflatten_dim_oob": lambda t: t.nn.Unflatten(3, (2, 3))(t.ones(2, 6)),
    "sequential_neg_index": lambda t: t.nn.Sequential(t.nn.ReLU())[-2],
    "modulelist_append_int": lambda t: t.nn.ModuleList().append(3),
    "moduledict_value": lambda t: t.nn.ModuleDict({"a": 3}),
    "moduledict_update_bad": lambda t: t.nn.ModuleDict().update(3),
    "paramdict_int_key": lambda t: t.nn.ParameterDict({1: t.nn.Parameter(t.ones(2))}),
    "register_param_tensor": lambda t: t.nn.Module().register_parameter("a", t.ones(2)),
    "gather_rank": lambda t: t.ones(2, 3).gather(1, t.tensor([0, 1])),
    "gather_dim_oob": lambda t: t.ones(2, 3).gather(2, t.zeros(2, 3, dtype=t.long)),
    "scatter_dtype": lambda t: t.zeros(2, 3).scatter(1, t.zeros(2, 3), 1.0),
    "index_select_2d_index": lambda t: t.ones(3).index_select(0, t.tensor([[0]])),
    "masked_fill_int_mask": lambda t: t.ones(3).masked_fill(t.ones(3, dtype=t.long), 0),
    "masked_fill_bcast": lambda t: t.ones(3).masked_fill(t.ones(4, dtype=t.bool), 0),
    "masked_fill_inplace_grow": lambda t: t.ones(3).masked_fill_(t.ones(2, 3, dtype=t.bool), 0),
    "where_shape": lambda t: t.where(t.ones(3, dtype=t.bool), t.ones(3), t.ones(4)),
    "expand_smaller": lambda t: t.ones(2, 3).expand(2, 1),
    "permute_missing3": lambda t: t.ones(2, 3, 4).permute(0, 1),
    "transpose_0d": lambda t: t.tensor(1.0).transpose(0, 1),
    "squeeze_tuple_dup": lambda t: t.ones(1, 3).squeeze((0, 0)),
    "unsqueeze_float": lambda t: t.ones(2, 3).unsqueeze(1.0),
    "split_zero": lambda t: t.ones(4).split(0),
    "split_sizes_big": lambda t: t.ones(4).split([3, 3]),
    "chunk_0d": lambda t: t.tensor(1.0).chunk(2),
    "tensor_split_float": lambda t: t.ones(4).tensor_split(1.5),
    "topk_neg": lambda t: t.ones(3).topk(-1),
    "sort_complex": lambda t: t.ones(3, dtype=t.complex64).sort(),
    "repeat_fewer3": lambda t: t.ones(2, 3, 4).repeat(2, 2),
    "repeat_interleave_neg": lambda t: t.ones(3).repeat_interleave(-1),
    "repeat_interleave_len": lambda t: t.ones(3).repeat_interleave(t.tensor([1, 2])),
    "narrow_neg_len": lambda t: t.ones(3).narrow(0, 0, -1),
    "narrow_start_oob": lambda t: t.ones(3).narrow(0, 5, 0),
    "cumsum_nodim": lambda t: t.ones(3).cumsum(),
    "add_inplace_float_to_int": lambda t: t.ones(3, dtype=t.long).add_(1.5),
    "mul_inplace_int_float_tensor": lambda t: t.ones(3, dtype=t.int32).mul_(t.ones(3)),
    "clamp_inplace_int_float": lambda t: t.ones(3, dtype=t.long).clamp_(0.5, 1.5),
    "leaf_mul_inplace": lambda t: t.ones(3, requires_grad=True).mul_(2),
    "leaf_relu_inplace": lambda t: F(t).relu(t.ones(3, requires_grad=True), inplace=True),
    "inplace_grow_mul": lambda t: t.ones(1, 3).mul_(t.ones(2, 3)),
    "linspace_float_steps": lambda t: t.linspace(0, 1, 2.5),
    "linspace_nosteps": lambda t: t.linspace(0, 1),
    "randint_equal": lambda t: t.randint(3, 3, (2,)),
    "multinomial_zero_sum": lambda t: t.multinomial(t.zeros(3), 1),
    "multinomial_norep_zero_prob": lambda t: t.multinomial(t.tensor([1.0, 0.0, 0.0]), 2),
    "one_hot_zero_classes": lambda t: F(t).one_hot(t.tensor([0]), 0),
    "adam_beta2": lambda t: t.optim.Adam([t.ones(2, requires_grad=True)], betas=(0.9, 1.0)),
    "optim_params_set": lambda t: t.optim.SGD({t.ones(2, requires_grad=True)}, lr=0.1),
    "dl_bs_neg": lambda t: D(t).DataLoader([1, 2], batch_size=-1),
    "dl_batch_sampler_shuffle": lambda t: D(
        t).DataLoader([1, 2], batch_sampler=[[0, 1]], shuffle=True),
    "random_split_sum_more": lambda t: D(t).random_split(range(5), [3, 3]),
    "tensordataset_three": lambda t: D(t).TensorDataset(t.ones(2, 3), t.ones(2), t.ones(4, 1)),
    "tensordataset_0d": lambda t: D(t).TensorDataset(t.tensor(1.0)),
    "weighted_sampler_norep_too_many": lambda t: list(
        D(t).WeightedRandomSampler([1.0, 2.0], 3, replacement=False)),
    "clamp_out_dtype": lambda t: t.clamp(t.ones(3, dtype=t.long), 0.5, out=t.ones(3, dtype=t.long)),
    "clamp_out_wider": lambda t: t.clamp(t.ones(3), 0.5, out=t.ones(3, dtype=t.float64)),
    "clamp_min_inplace_int_float": lambda t: t.ones(3, dtype=t.int16).clamp_min_(0.5),
    "clamp_inplace_bool_int": lambda t: t.ones(3, dtype=t.bool).clamp_(0),
    "clamp_inplace_tensor_bound": lambda t: t.ones(3, dtype=t.long).clamp_(max=t.tensor(0.5)),
    "sum_dims_dup": lambda t: t.ones(1, 1, 3).sum((2, 0, 0)),
    "squeeze_dims_dup_later": lambda t: t.ones(1, 1, 3).squeeze((1, 0, 1, 0)),
    "size_0d": lambda t: t.tensor(1.0).size(0),
    "stride_0d": lambda t: t.tensor(1.0).stride(-1),
    "split_0d": lambda t: t.tensor(1.0).split(1),
    "argsort_complex": lambda t: t.ones(3, dtype=t.complex64).argsort(),
    "topk_complex": lambda t: t.ones(3, dtype=t.complex64).topk(1),
    # no CPU kernel for complex (nor for bool in the selections)
    "kthvalue_complex": lambda t: t.ones(3, dtype=t.complex64).kthvalue(1),
    "median_complex": lambda t: t.ones(3, dtype=t.complex64).median(),
    "median_dim_complex": lambda t: t.ones(3, dtype=t.complex64).median(0),
    "nanmedian_complex": lambda t: t.ones(3, dtype=t.complex64).nanmedian(),
    "median_dim_bool": lambda t: t.ones(3, dtype=t.bool).median(0),
    "nanmedian_bool": lambda t: t.ones(3, dtype=t.bool).nanmedian(),
    "mode_complex": lambda t: t.ones(3, dtype=t.complex64).mode(),
    "mode_bool": lambda t: t.ones(3, dtype=t.bool).mode(),
    "unique_complex": lambda t: t.ones(3, dtype=t.complex64).unique(),
    "unique_dim_complex": lambda t: t.unique(t.ones(3, dtype=t.complex64), dim=0),
    "unique_consecutive_complex": lambda t: t.ones(3, dtype=t.complex64).unique_consecutive(),
    "cummax_complex": lambda t: t.ones(3, dtype=t.complex64).cummax(0),
    "cummin_complex": lambda t: t.ones(3, dtype=t.complex64).cummin(0),
    "multilabel_margin_0d": lambda t: F(t).multilabel_margin_loss(t.tensor(0.5), t.tensor(0)),
    "requires_grad_str": lambda t: t.ones(2).requires_grad_("no"),
    "requires_grad_int": lambda t: t.ones(2).requires_grad_(1),
    "requires_grad_np_bool": lambda t: t.ones(2).requires_grad_(__import__("numpy").bool_(True)),
    "requires_grad_tensor": lambda t: t.ones(2).requires_grad_(t.tensor(True)),
    "module_requires_grad_str": lambda t: t.nn.Linear(1, 1).requires_grad_("no"),
    "multilabel_margin_0d_range": lambda t: F(t).multilabel_margin_loss(t.tensor(0.5),
                                                                        t.tensor(1)),
    "unsqueeze_bool": lambda t: t.ones(2).unsqueeze(True),
    "unsqueeze_int_tensor_ok": lambda t: t.ones(2).unsqueeze(t.tensor(0)).shape,
    "narrow_neg_start_oob": lambda t: t.ones(3).narrow(0, -4, 1),
    "repeat_interleave_tensor_neg": lambda t: t.ones(3).repeat_interleave(t.tensor([1, -1, 1])),
    "repeat_interleave_len_dim1": lambda t: t.ones(2, 3).repeat_interleave(t.tensor([1, 2]), dim=1),
    "unflatten_inferred_zero": lambda t: t.ones(2, 0).unflatten(1, (-1, 0)),
    "unflatten_bad_negative": lambda t: t.ones(2, 6).unflatten(1, (-2, 3)),
    "unflatten_empty_sizes": lambda t: t.ones(2, 6).unflatten(1, ()),
    "unflatten_infer_mismatch": lambda t: t.ones(2, 6).unflatten(1, (-1, 4)),
    "pad_reflect_3d_depth": lambda t: F(
        t).pad(t.ones(1, 1, 4, 4, 4), (1, 1, 1, 1, 4, 4), mode="reflect"),
    "conv1d_unbatched_dilation": lambda t: F(t).conv1d(t.ones(3, 8), t.ones(4, 3, 3), dilation=0),
    "convT1d_dilation_zero": lambda t: F(
        t).conv_transpose1d(t.ones(1, 3, 8), t.ones(3, 3, 3), dilation=0),
    "convT3d_dilation_zero": lambda t: F(
        t).conv_transpose3d(t.ones(1, 3, 8, 8, 8), t.ones(3, 3, 3, 3, 3), dilation=0),
    "convT_output_size_len": lambda t: t.nn.ConvTranspose2d(
        3, 4, 3, stride=2)(t.ones(1, 3, 5, 5), output_size=[20]),
    "convT_output_size_tuple": lambda t: t.nn.ConvTranspose2d(
        3, 4, 3, stride=2)(t.ones(1, 3, 5, 5), output_size=(20, 20)),
    "convT_output_size_unbatched": lambda t: t.nn.ConvTranspose2d(
        3, 4, 3, stride=2)(t.ones(3, 5, 5), output_size=[4, 20, 20]),
    "convT_output_size_dilation": lambda t: t.nn.ConvTranspose1d(
        3, 4, 3, dilation=3)(t.ones(1, 3, 5), output_size=[12]),
    "convT_output_size_ok": lambda t: t.nn.ConvTranspose2d(
        3, 4, 3, stride=2)(t.ones(1, 3, 5, 5), output_size=[1, 4, 12, 11]).shape,
    "moduledict_update_elem_int": lambda t: t.nn.ModuleDict().update([1]),
    "moduledict_update_elem_len": lambda t: t.nn.ModuleDict().update([("a", t.nn.ReLU(), 3)]),
    "paramdict_update_int": lambda t: t.nn.ParameterDict().update(3),
    "paramdict_getitem_int": lambda t: t.nn.ParameterDict()[1],
    "mha_cross_attention_kdim": lambda t: t.nn.MultiheadAttention(
        8, 2)(t.ones(3, 2, 8), t.ones(4, 2, 6), t.ones(4, 2, 6)),
    "flip_dup": lambda t: t.ones(2, 3).flip(0, 0),
    "flip_dup_wrapped": lambda t: t.flip(t.ones(2, 2), (1, -1)),
    "addmm_shape": lambda t: t.addmm(t.ones(3, 3), t.ones(2, 3), t.ones(3, 2)),
    "expand_last_dim_first": lambda t: t.ones(3, 3).expand(2, 2),
    "expand_leading_minus_one": lambda t: t.ones(3).expand(2, -1, 3),
    "expand_leading_negative": lambda t: t.ones(3).expand(-2, 3),
    "full_str_fill": lambda t: t.full((2,), "a"),
    "full_list_fill": lambda t: t.full((2,), [1]),
    "full_1d_tensor_fill": lambda t: t.full((2,), t.tensor([1.0])),
    "full_0d_tensor_ok": lambda t: t.full((2,), t.tensor(1.0)).tolist(),
    "arange_str": lambda t: t.arange("a"),
    "arange_two_args_str": lambda t: t.arange("a", 5),
    "arange_step_none": lambda t: t.arange(0, 5, None),
    "arange_1d_tensor": lambda t: t.arange(t.ones(2)),
    "tensor_to_dtype_str": lambda t: t.ones(2).to(dtype="float32"),
    "tensor_to_dtype_twice": lambda t: t.ones(2).to(t.float64, dtype=t.float32),
    "tensor_to_device_and_dtype_str": lambda t: t.ones(2).to("cpu", dtype="a"),
    "tensor_to_dtype_str_copy": lambda t: t.ones(2).to(dtype="a", copy=1),
    "cumsum_dtype_bad": lambda t: t.ones(3).cumsum(0, dtype="float"),
    "cumprod_dtype_bad": lambda t: t.ones(3).cumprod(0, dtype="float"),
    "prod_dtype_bad": lambda t: t.ones(3).prod(0, dtype="float"),
    "nansum_dtype_bad": lambda t: t.ones(3).nansum(dtype="float"),
    "setitem_colon_leaf": lambda t: t.ones(3, requires_grad=True).__setitem__(slice(None), 0),
    "setitem_ellipsis_leaf": lambda t: t.ones(3, requires_grad=True).__setitem__(Ellipsis, 0),
    "setitem_full_range_leaf": lambda t: t.ones(3, requires_grad=True).__setitem__(slice(0, 3), 0),
    "setitem_part_leaf": lambda t: t.ones(3, requires_grad=True).__setitem__(slice(0, 2), 0),
    "multilabel_margin_target_shape": lambda t: F(
        t).multilabel_margin_loss(t.ones(2, 3), t.zeros(2, 4, dtype=t.long)),
    "multilabel_margin_1d_target_len": lambda t: F(
        t).multilabel_margin_loss(t.ones(3), t.zeros(4, dtype=t.long)),
    "multilabel_margin_3d": lambda t: F(
        t).multilabel_margin_loss(t.ones(2, 3, 1), t.zeros(2, 3, 1, dtype=t.long)),
    "ctc_blank_oob": lambda t: F(t).ctc_loss(
        t.ones(5, 2, 4).log_softmax(2), t.tensor([[1, 2], [1, 2]]), [5, 5], [2, 2], blank=5),
    "ctc_blank_neg": lambda t: F(t).ctc_loss(
        t.ones(5, 2, 4).log_softmax(2), t.tensor([[1, 2], [1, 2]]), [5, 5], [2, 2], blank=-1),
    "pack_lengths_tensor_2d": lambda t: t.nn.utils.rnn.pack_padded_sequence(
        t.ones(5, 2, 3), t.tensor([[5, 3]])),
    "pack_lengths_0d": lambda t: t.nn.utils.rnn.pack_padded_sequence(t.ones(5, 2, 3), t.tensor(5)),
    "modulelist_extend_int": lambda t: t.nn.ModuleList().extend(3),
    "paramlist_extend_int": lambda t: t.nn.ParameterList().extend(3),
    "bce_logits_weight": lambda t: F(
        t).binary_cross_entropy_with_logits(t.ones(2, 3), t.ones(2, 3), weight=t.ones(4)),
    "gaussian_nll_var_neg": lambda t: F(t).gaussian_nll_loss(t.ones(2), t.ones(2), -t.ones(2)),
    "glu_odd": lambda t: F(t).glu(t.ones(3)),
    "prelu_weight": lambda t: t.nn.PReLU(3)(t.ones(2, 4)),
    "bilinear_shape": lambda t: t.nn.Bilinear(3, 4, 5)(t.ones(2, 3), t.ones(2, 5)),
    "fold_bad": lambda t: F(t).fold(t.ones(1, 4, 5), output_size=(4, 4), kernel_size=2),
    "affine_grid_theta": lambda t: F(t).affine_grid(t.ones(2, 3, 3), (2, 1, 4, 4)),
    "grid_sample_grid_shape": lambda t: F(t).grid_sample(t.ones(1, 1, 4, 4), t.zeros(1, 2, 2, 3)),
    "vector_to_params_bad": lambda t: t.nn.utils.vector_to_parameters(
        t.ones(2), [t.nn.Parameter(t.ones(3))]),
    "load_sd_unexpected_nested": lambda t: t.nn.Sequential(t.nn.Linear(2, 2)).load_state_dict(
        {"0.weight": t.ones(2, 2), "0.bias": t.ones(2), "1.weight": t.ones(1)}),
    "load_sd_nonstrict_shape": lambda t: t.nn.Linear(
        2, 2).load_state_dict({"weight": t.ones(3, 2)}, strict=False),
    "load_sd_not_mapping": lambda t: t.nn.Linear(2, 2).load_state_dict([1, 2]),
}


def case(f):
    CASES[f.__name__] = f
    return f


@case
def backward_nonscalar_2d(t):
    x = t.ones(2, 2, requires_grad=True)
    (x * 2).backward()


@case
def backward_twice_mul(t):
    x = t.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


@case
def grad_unused_two(t):
    x = t.ones(3, requires_grad=True)
    z = t.ones(3, requires_grad=True)
    return t.autograd.grad((x * 2).sum(), [x, z])


@case
def grad_outputs_len(t):
    x = t.ones(3, requires_grad=True)
    return t.autograd.grad(x * 2, x, grad_outputs=[t.ones(3), t.ones(3)])


@case
def requires_grad_nonleaf_int(t):
    x = t.ones(3, requires_grad=True)
    y = (x * 2).long()
    return y.requires_grad_()


@case
def grad_assign_shape(t):
    x = t.ones(3, requires_grad=True)
    x.grad = t.ones(4)


@case
def inplace_after_use(t):
    x = t.ones(3, requires_grad=True)
    y = x * 2
    z = y.sigmoid()
    y.mul_(2)
    z.sum().backward()


@case
def no_grad_backward(t):
    x = t.ones(3, requires_grad=True)
    with t.no_grad():
        y = (x * 2).sum()
    y.backward()


@case
def hook_wrong_shape(t):
    x = t.ones(3, requires_grad=True)
    x.register_hook(lambda g: t.ones(4))
    (x * 2).sum().backward()


@case
def steplr_nonopt(t):
    return t.optim.lr_scheduler.StepLR([1, 2], 2)


@case
def onecycle_past(t):
    o = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    s = t.optim.lr_scheduler.OneCycleLR(o, max_lr=1, total_steps=3)
    for _ in range(4):
        o.step()
        s.step()


@case
def onecycle_no_total(t):
    o = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    return t.optim.lr_scheduler.OneCycleLR(o, max_lr=1)


@case
def onecycle_maxlr_list(t):
    o = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    return t.optim.lr_scheduler.OneCycleLR(o, max_lr=[1, 2], total_steps=10)


@case
def cycliclr_no_momentum(t):
    o = t.optim.Adagrad([t.ones(2, requires_grad=True)], lr=0.1)
    return t.optim.lr_scheduler.CyclicLR(o, 0.1, 1)


@case
def sequentiallr_milestones(t):
    o = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    s1 = t.optim.lr_scheduler.StepLR(o, 2)
    s2 = t.optim.lr_scheduler.StepLR(o, 2)
    return t.optim.lr_scheduler.SequentialLR(o, [s1, s2], milestones=[1, 2])


@case
def sequentiallr_other_opt(t):
    o = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    o2 = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    s1 = t.optim.lr_scheduler.StepLR(o, 2)
    s2 = t.optim.lr_scheduler.StepLR(o2, 2)
    return t.optim.lr_scheduler.SequentialLR(o, [s1, s2], milestones=[1])


@case
def plateau_min_lr_len(t):
    o = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    return t.optim.lr_scheduler.ReduceLROnPlateau(o, min_lr=[0.1, 0.2])


@case
def optim_load_sd_groups(t):
    a = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    b = t.optim.SGD([{"params": [t.ones(2, requires_grad=True)]},
                     {"params": [t.ones(2, requires_grad=True)]}], lr=0.1)
    b.load_state_dict(a.state_dict())


@case
def optim_add_group_nondict(t):
    o = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    o.add_param_group([t.ones(2, requires_grad=True)])


@case
def hook_changed_dtype(t):
    x = t.ones(3, requires_grad=True)
    x.register_hook(lambda g: g.double())
    (x * 2).sum().backward()


@case
def hook_returns_int(t):
    x = t.ones(3, requires_grad=True)
    x.register_hook(lambda g: 3)
    (x * 2).sum().backward()


@case
def hook_nonleaf_wrong_shape(t):
    x = t.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: t.ones(4))
    y.sum().backward()


@case
def hook_autograd_grad_shape(t):
    x = t.ones(3, requires_grad=True)
    x.register_hook(lambda g: t.ones(4))
    return t.autograd.grad((x * 2).sum(), x)


@case
def grad_outputs_fewer(t):
    x = t.ones(3, requires_grad=True)
    return t.autograd.grad([x * 2, x * 3], x, [t.ones(3)])


@case
def backward_grads_empty(t):
    x = t.ones(3, requires_grad=True)
    t.autograd.backward([x.sum(), x.sum()], [])


@case
def chained_other_opt(t):
    L = t.optim.lr_scheduler
    o = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    o2 = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    return L.ChainedScheduler([L.StepLR(o, 2), L.StepLR(o2, 2)])


@case
def cyclic_base_momentum_len(t):
    o = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1, momentum=0.9)
    return t.optim.lr_scheduler.CyclicLR(o, 0.1, 1, base_momentum=[0.1, 0.2])


@case
def c(name, f): C[name] = f


@case
def func_backward_wrong_type(t):
    class Fn(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 3
    x = t.ones(2, requires_grad=True)
    Fn.apply(x).sum().backward()


@case
def func_save_nontensor(t):
    class Fn(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g
    return Fn.apply(t.ones(2, requires_grad=True))


@case
def grad_inputs_empty(t):
    x = t.ones(2, requires_grad=True)
    return t.autograd.grad((x * 2).sum(), [])


@case
def gradcheck_no_grad(t):
    return t.autograd.gradcheck(lambda x: x * 2, (t.ones(2, dtype=t.float64),))


@case
def set_grad_enabled_str(t):
    return t.set_grad_enabled("yes")


@case
def sgd_foreach_fused(t):
    return t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1, foreach=True, fused=True)


@case
def adam_foreach_fused(t):
    return t.optim.Adam([t.ones(2, requires_grad=True)], foreach=True, fused=True)


@case
def backward_inputs_nograd(t):
    x = t.ones(2, requires_grad=True)
    (x * 2).sum().backward(inputs=[t.ones(2)])


@case
def hessian_nonscalar(t):
    return t.autograd.functional.hessian(lambda x: x * 2, t.ones(2))


@case
def inference_inplace_outside(t):
    with t.inference_mode():
        x = t.ones(2)
    x.add_(1)


@case
def view_inplace_multi_output(t):
    x = t.ones(4, requires_grad=True) * 1
    a, b = x.split(2)
    a.mul_(2)


@case
def plateau_step_no_metric(t):
    o = t.optim.SGD([t.ones(2, requires_grad=True)], lr=0.1)
    t.optim.lr_scheduler.ReduceLROnPlateau(o).step()


@pytest.mark.parametrize("name", list(CASES))
def test_more_wrong_calls_answered_as_pytorch(torch, name):
    assert_answered_as_pytorch(torch, CASES[name], name in TYPE_ONLY)
