"""What the writer logs, as NumPy arrays: ember tensors (any device), arrays, Python numbers;
and images laid out as height x width x RGB."""
import numpy as np

from ..._tensor import Tensor
from ... import dtypes


def make_np(value):
    """A NumPy array holding `value` (a Python number becomes a 1-element array)."""
    if isinstance(value, np.ndarray):
        return value
    if np.isscalar(value):
        return np.array([value])
    if isinstance(value, Tensor):
        if value.device.type == "meta":  # no data to log: a placeholder draw, as PyTorch
            return np.random.randn(1)
        if value.dtype == dtypes.bfloat16:
            value = value.to(dtypes.float16)
        return value.detach().cpu().numpy()
    raise NotImplementedError(
        f"Got {type(value)}, but numpy array or torch tensor are expected.")


def _tile(batch, columns=8):
    """N x C x H x W images (C 1 or 3) laid side by side, `columns` a row, as one 3 x H x W."""
    if batch.shape[1] == 1:
        batch = np.concatenate([batch] * 3, 1)
    if batch.ndim != 4 or batch.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    count, _, height, width = batch.shape
    columns = min(count, columns)
    rows = -(-count // columns)
    canvas = np.zeros((3, height * rows, width * columns), dtype=batch.dtype)
    for i in range(count):
        y, x = divmod(i, columns)
        canvas[:, y * height:(y + 1) * height, x * width:(x + 1) * width] = batch[i]
    return canvas


def to_hwc(array, dataformats):
    """`array` in the layout `dataformats` names (NCHW, CHW, HWC, HW ...) as H x W x 3."""
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError("You can not use the same dimension shorthand twice. "
                             f"input_format: {dataformats}")
    if array.ndim != len(dataformats):
        raise AssertionError("size of input tensor and input format are different. "
                             f"tensor shape: {array.shape}, input_format: {dataformats}")
    layout = dataformats.upper()
    if len(layout) == 4:
        batch = array.transpose([layout.find(c) for c in "NCHW"])
        return _tile(batch).transpose(1, 2, 0)
    if len(layout) == 3:
        hwc = array.transpose([layout.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    hw = array.transpose([layout.find(c) for c in "HW"])
    return np.stack([hw] * 3, 2)


def figure_to_image(figures, close=True):
    """Matplotlib figure(s) rendered to RGB: C x H x W, or N x C x H x W for a list."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure):
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        width, height = figure.canvas.get_width_height()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(height, width, 4)
        if close:
            plt.close(figure)
        return np.moveaxis(rgba[:, :, :3], 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)
