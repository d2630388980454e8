"""The meta device: tensors with a shape, a dtype and strides, and no data (PyTorch's
`device("meta")`). Its arrays (`array.ndarray`) and array module (`module`) stand where NumPy's
stand for the CPU, so every op body runs on meta unchanged, computing shapes only."""

_UNSUPPORTED = ("{}: attempted to run this operator with Meta tensors, but there was no fake impl "
                "or Meta kernel registered. You may have run into this message while using an "
                "operator with PT2 compilation APIs (torch.compile/torch.export); in order to use "
                "this operator with those APIs you'll need to add a fake impl. Please see the "
                "following for next steps:  "
                "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")


def refuse_on_meta(aten_name, *tensors):
    """PyTorch's NotImplementedError for an op it has no meta kernel for (its result's shape
    or value depends on the data: unique, bincount, equal ...), when any of `tensors` is a
    meta tensor (None and numbers are skipped)."""
    for t in tensors:
        device = getattr(t, "_device", None)
        if device is not None and device.type == "meta":
            raise NotImplementedError(_UNSUPPORTED.format(aten_name))
