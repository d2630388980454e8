"""HMDB51, UCF101 and Kinetics: fold selection and clipping over small MJPEG videos written with
PyAV when it is installed, and torchvision's missing-backend ImportError when it is not."""
import os
import sys

import numpy as np
import pytest

import ember
import ember.vision.datasets as D
from ember.vision.datasets.video_utils import VideoClips, unfold
from tests.vision.datasets._parity import write_text


def _write_videos(root, lengths):
    av = pytest.importorskip("av")
    for (cls, index), n in lengths.items():
        path = root / cls / f"{cls}_{index}.avi"
        path.parent.mkdir(parents=True, exist_ok=True)
        with av.open(str(path), "w") as container:
            stream = container.add_stream("mjpeg", rate=10)
            stream.width, stream.height, stream.pix_fmt = 32, 24, "yuvj420p"
            for i in range(n):
                frame = np.full((24, 32, 3), i * 30, np.uint8)
                for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)


def test_missing_backend_raises_torchvision_error(tmp_path, monkeypatch):
    write_text(tmp_path / "jump" / "jump_0.avi", "")
    monkeypatch.setitem(sys.modules, "av", None)
    with pytest.raises(ImportError, match="Video decoding capabilities were removed from "
                       "torchvision and migrated to TorchCodec"):
        D.UCF101(str(tmp_path), str(tmp_path), frames_per_clip=2, num_workers=0)
    with pytest.raises(ValueError, match="fold should be between 1 and 3, got 4"):
        D.HMDB51(str(tmp_path), str(tmp_path), frames_per_clip=2, fold=4)


def test_unfold_and_resampling():
    windows = unfold(ember.arange(7), 3, 2)
    assert windows.tolist() == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    assert unfold(ember.arange(2), 3, 1).shape == (0, 3)
    assert VideoClips._resample_video_idx(4, 10, 5) == slice(None, None, 2)
    assert VideoClips._resample_video_idx(5, 10, 4).tolist() == [0, 2, 5, 7, 10]
    with pytest.raises(ValueError, match="output_format should be either 'THWC' or 'TCHW'"):
        VideoClips([], output_format="HWC")


def test_hmdb51(tmp_path):
    _write_videos(tmp_path / "videos", {("brush", 0): 7, ("brush", 1): 8, ("wave", 0): 6})
    for cls, names in (("brush", "brush_0.avi 1\nbrush_1.avi 2\n"), ("wave", "wave_0.avi 1\n")):
        write_text(tmp_path / "splits" / f"{cls}_test_split1.txt", names)
    train = D.HMDB51(str(tmp_path / "videos"), str(tmp_path / "splits"), frames_per_clip=4,
                     step_between_clips=2, num_workers=0)
    assert train.indices == [0, 2] and len(train) == 2 + 2
    video, audio, label = train[3]
    assert video.shape == (4, 24, 32, 3) and video.dtype == ember.uint8
    assert audio.shape == (1, 0) and audio.dtype == ember.float32 and label == 1
    # MJPEG is lossy: the flat frames keep their order of brightness
    assert sorted(video[:, 0, 0, 0].tolist()) == video[:, 0, 0, 0].tolist()
    test = D.HMDB51(str(tmp_path / "videos"), str(tmp_path / "splits"), frames_per_clip=3,
                    frame_rate=5, train=False, num_workers=0, output_format="TCHW")
    video, _, label = test[0]
    assert len(test) == 2 and video.shape == (3, 3, 24, 32) and label == 0
    assert train.metadata["video_fps"] == [10.0, 10.0, 10.0]


def test_ucf101_and_kinetics(tmp_path):
    _write_videos(tmp_path / "ucf", {("Archery", 0): 5, ("Biking", 0): 5})
    write_text(tmp_path / "lists" / "testlist02.txt", "Biking/Biking_0.avi\n")
    ucf = D.UCF101(str(tmp_path / "ucf"), str(tmp_path / "lists"), frames_per_clip=5, fold=2,
                   train=False, num_workers=0)
    assert len(ucf) == 1 and ucf[0][2] == 1
    _write_videos(tmp_path / "kinetics" / "val", {("abseiling", 0): 4, ("zumba", 0): 6})
    kinetics = D.Kinetics(str(tmp_path / "kinetics"), frames_per_clip=3, split="val",
                          step_between_clips=3, num_workers=0)
    assert kinetics.classes == ["abseiling", "zumba"] and len(kinetics) == 1 + 2
    video, _, label = kinetics[2]
    assert video.shape == (3, 3, 24, 32) and label == 1
    assert os.path.basename(kinetics.metadata["video_paths"][1]) == "zumba_0.avi"
