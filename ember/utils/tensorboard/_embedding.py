"""The projector plugin's files for `SummaryWriter.add_embedding`: under
<log_dir>/<step, 5 digits>/<tag>/ the points (tensors.tsv), their labels (metadata.tsv) and
a square sprite of their thumbnails (sprite.png); projector_config.pbtxt in log_dir lists
every embedding logged."""
import io
import math
import os

import numpy as np

from ._convert import _tile, make_np

__all__ = ["encode_tag", "write_embedding"]


def encode_tag(tag):
    """The tag as one directory name: '%', '/' and '\\' escaped as %xx."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def _write(path, text):
    with open(path, "wb") as f:
        f.write(text.encode("utf-8"))


def _write_metadata(metadata, folder, header):
    if header:
        if len(header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in "
                                 "metadata")
        lines = ["\t".join(str(e) for e in row) for row in [header] + list(metadata)]
    else:
        lines = [str(x) for x in metadata]
    _write(os.path.join(folder, "metadata.tsv"), "\n".join(lines) + "\n")


def _write_sprite(images, folder):
    from PIL import Image
    per_row = math.ceil(images.shape[0] ** 0.5)
    tiled = _tile(make_np(images), columns=per_row).transpose(1, 2, 0)
    side = tiled.shape[1]
    square = np.zeros((side, side, 3))  # the projector wants a square sprite
    square[:tiled.shape[0]] = tiled
    buffer = io.BytesIO()
    Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(buffer, format="PNG")
    with open(os.path.join(folder, "sprite.png"), "wb") as f:
        f.write(buffer.getvalue())


def write_embedding(log_dir, config, mat, metadata, label_img, global_step, tag,
                    metadata_header):
    """Write one embedding's files and add it to `config` (a ProjectorConfig), rewritten."""
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo
    mat = make_np(mat)
    step = 0 if global_step is None else global_step
    subdir = f"{str(step).zfill(5)}/{encode_tag(tag)}"
    folder = os.path.join(log_dir, subdir)
    if os.path.exists(folder):
        if not os.path.isdir(folder):
            raise NotADirectoryError(f"Path: `{folder}` exists, but is a file. Cannot proceed.")
        print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
    else:
        os.makedirs(folder)
    info = EmbeddingInfo(tensor_name=f"{tag}:{str(step).zfill(5)}",
                         tensor_path=os.path.join(subdir, "tensors.tsv"))
    if metadata is not None:
        if mat.shape[0] != len(metadata):
            raise AssertionError("#labels should equal with #data points")
        _write_metadata(metadata, folder, metadata_header)
        info.metadata_path = os.path.join(subdir, "metadata.tsv")
    if label_img is not None:
        if mat.shape[0] != label_img.shape[0]:
            raise AssertionError("#images should equal with #data points")
        _write_sprite(label_img, folder)
        info.sprite.image_path = os.path.join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    if mat.ndim != 2:
        raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
    _write(os.path.join(folder, "tensors.tsv"),
           "".join("\t".join(str(v.item()) for v in row) + "\n" for row in mat))
    config.embeddings.extend([info])
    _write(os.path.join(log_dir, "projector_config.pbtxt"), text_format.MessageToString(config))
