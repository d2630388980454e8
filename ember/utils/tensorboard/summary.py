"""The `Summary` protocol buffers SummaryWriter logs, built from ember tensors and arrays with
the tensorboard package's protos: scalars, histograms, PNG images, text and hyperparameters,
each with the plugin metadata TensorBoard's dashboards look for."""
import io

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._tensor import Tensor
from ._convert import make_np, to_hwc

__all__ = ["scalar", "histogram", "histogram_raw", "make_histogram", "image", "make_image",
           "text", "hparams", "audio", "pr_curve", "pr_curve_raw", "compute_curve",
           "custom_scalars"]


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    value = make_np(tensor).squeeze()
    if value.ndim != 0:
        raise AssertionError("Tensor should contain one element (0 dimensions). Was given "
                             f"size: {value.size} and {value.ndim} dimensions.")
    number = float(value)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=number)])
    proto = (TensorProto(double_val=[number], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[number], dtype="DT_FLOAT"))
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=metadata)])


def make_histogram(values, bins, max_bins=None):
    """A HistogramProto of `values`: NumPy's histogram over `bins`, merged down to at most
    `max_bins` buckets, trimmed to the buckets between the first and last non-empty ones
    (keeping one empty bucket on the left as the lower edge)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        short = len(counts) % group
        if short:
            counts = np.pad(counts, (0, group - short))
        counts = counts.reshape(-1, group).sum(axis=-1)
        limits = np.append(limits[:-1:group], limits[-1])
    filled = np.cumsum(counts > 0)
    first, last = np.searchsorted(filled, [0, filled[-1] - 1], side="right")
    first, last = int(first), int(last) + 1
    counts = counts[first - 1:last] if first > 0 else np.concatenate([[0], counts[:last]])
    limits = limits[first:last + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values),
                          sum=values.sum(), sum_squares=values.dot(values),
                          bucket_limit=limits.tolist(), bucket=counts.tolist())


def histogram(name, values, bins, max_bins=None):
    histo = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=histo)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    histo = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                           bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=histo)])


def make_image(array, rescale=1):
    """A PNG Summary.Image of an H x W x C uint8 array."""
    from PIL import Image
    height, width, channels = array.shape
    picture = Image.fromarray(array).resize(
        (int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return Summary.Image(height=height, width=width, colorspace=channels,
                         encoded_image_string=buffer.getvalue())


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """Floats are taken as 0..1 and scaled to 0..255; uint8 images are logged as they are."""
    array = to_hwc(make_np(tensor), dataformats)
    scale = 1 if array.dtype == np.uint8 else 255
    array = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(array, rescale))])


def text(tag, text):
    content = TextPluginData(version=0).SerializeToString()
    metadata = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(plugin_name="text", content=content))
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata,
                                        tensor=proto)])


def _hparams_summary(tag, **content):
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
    data = HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content)
    plugin = SummaryMetadata.PluginData(plugin_name=metadata.PLUGIN_NAME,
                                        content=data.SerializeToString())
    return Summary(value=[Summary.Value(tag=tag, metadata=SummaryMetadata(plugin_data=plugin))])


# hparam value kind -> (proto DataType, the struct_pb2.Value field holding one). A bool is an
# int, so it logs as a number (PyTorch's writer does the same).
_HPARAM_KINDS = (((int, float), "DATA_TYPE_FLOAT64", "number_value"),
                 (str, "DATA_TYPE_STRING", "string_value"))


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three summaries of the HParams dashboard: the experiment (which hparams and
    metrics exist), and this session's start (its hparam values) and end."""
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import (DataType, Experiment, HParamInfo,
                                                     MetricInfo, MetricName, Status)
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, "
                        "nothing logged.")
    for key, domain in domains.items():
        if key not in hparam_dict or not isinstance(domain, list) or \
                not all(isinstance(d, type(hparam_dict[key])) for d in domain):
            raise TypeError(f"parameter: hparam_domain_discrete[{key}] should be a list of "
                            f"same type as hparam_dict[{key}].")
    infos = []
    start = SessionStartInfo()
    for key, value in hparam_dict.items():
        if value is None:
            continue
        if isinstance(value, Tensor):
            start.hparams[key].number_value = make_np(value)[0]
            infos.append(HParamInfo(name=key, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        kind = next((k for k in _HPARAM_KINDS if isinstance(value, k[0])), None)
        if kind is None:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        _, data_type, field = kind
        setattr(start.hparams[key], field, value)
        domain = None
        if key in domains:
            domain = struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: d}) for d in domains[key]])
        infos.append(HParamInfo(name=key, type=DataType.Value(data_type),
                                domain_discrete=domain))
    experiment = Experiment(hparam_infos=infos,
                            metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    end = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))
    return (_hparams_summary(metadata.EXPERIMENT_TAG, experiment=experiment),
            _hparams_summary(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            _hparams_summary(metadata.SESSION_END_INFO_TAG, session_end_info=end))


def audio(tag, tensor, sample_rate=44100):
    """One channel of samples in [-1, 1] (louder ones are clipped) as 16-bit WAV."""
    import wave
    samples = make_np(tensor).squeeze()
    if abs(samples).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        samples = samples.clip(-1, 1)
    if samples.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    pcm = (samples * np.iinfo(np.int16).max).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(pcm.data)
    clip = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[-1],
                         encoded_audio_string=buffer.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=clip)])


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """Rows tp, fp, tn, fn, precision, recall at `num_thresholds` thresholds over [0, 1]:
    predictions fall in buckets, and the counts at a threshold are those of the buckets at
    or above it."""
    smallest = 1e-7  # keeps precision and recall finite when nothing is counted
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(np.float64)
    span = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=span,
                                 weights=positive * weights)
    fp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=span,
                                 weights=(1.0 - positive) * weights)
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(smallest, tp + fp)
    recall = tp / np.maximum(smallest, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def _pr_summary(tag, data, num_thresholds):
    from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    metadata = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(plugin_name="pr_curves", content=content))
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=n)
                                                           for n in data.shape[:2]]))
    return Summary(value=[Summary.Value(tag=tag, metadata=metadata, tensor=proto)])


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    num_thresholds = min(num_thresholds, 127)  # the plugin's limit
    return _pr_summary(tag, compute_curve(labels, predictions, num_thresholds, weights),
                       num_thresholds)


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    return _pr_summary(tag, np.stack((tp, fp, tn, fn, precision, recall)),
                       min(num_thresholds, 127))


def custom_scalars(layout):
    """The Custom Scalars dashboard's layout: {category: {chart title: ['Multiline', tags]
    or ['Margin', [value, lower, upper]]}}."""
    from tensorboard.plugins.custom_scalar import layout_pb2
    categories = []
    for category, charts in layout.items():
        made = []
        for title, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                              upper=tags[2])
                made.append(layout_pb2.Chart(
                    title=title, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                made.append(layout_pb2.Chart(
                    title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=category, chart=made))
    proto = TensorProto(dtype="DT_STRING",
                        string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
                        tensor_shape=TensorShapeProto())
    metadata = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto,
                                        metadata=metadata)])
