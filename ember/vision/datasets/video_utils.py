"""VideoClips (torchvision.datasets.video_utils): every window of `clip_length_in_frames`
frames, `frames_between_clips` apart, over a list of videos, optionally resampled to another
frame rate. Frame counts, rates and frames are read through PyAV (`av`), imported when a video
is first touched; without it the error is torchvision's (which decodes through TorchCodec)."""
import bisect
import math
import warnings

import numpy as np

__all__ = ["VideoClips", "unfold"]

_MISSING_BACKEND = ("Video decoding capabilities were removed from torchvision and migrated to "
                    "TorchCodec. Please install TorchCodec following instructions at "
                    "https://github.com/pytorch/torchcodec#installing-torchcodec")


def _av():
    try:
        import av
    except ImportError:
        raise ImportError(_MISSING_BACKEND + " (ember decodes video through PyAV: pip install av)")
    return av


def unfold(tensor, size, step, dilation=1):
    """The windows of `size` elements, `step` apart, of a 1-D tensor, as rows of a 2-D view."""
    from ... import from_numpy
    if tensor.dim() != 1:
        raise ValueError(f"tensor should have 1 dimension instead of {tensor.dim()}")
    values = tensor.numpy()
    span = dilation * (size - 1) + 1
    count = max((len(values) - span) // step + 1, 0)
    starts = np.arange(count)[:, None] * step + np.arange(size)[None, :] * dilation
    return from_numpy(np.ascontiguousarray(values[starts].reshape(count, size)))


class _VideoTimestampsDataset:
    """Item i: (frame numbers 0..n-1, average fps) of video i; a Dataset so that workers can
    share the probing."""

    def __init__(self, video_paths):
        self.video_paths = video_paths

    def __len__(self):
        return len(self.video_paths)

    def __getitem__(self, idx):
        with _av().open(self.video_paths[idx]) as container:
            stream = container.streams.video[0]
            fps = float(stream.average_rate) if stream.average_rate else None
            num_frames = sum(1 for _ in container.decode(stream))
        return list(range(num_frames)), fps


def _collate_fn(x):
    return x


def _decode(path, start, end, channels_first):
    """Frames start..end (inclusive) as uint8 (T, H, W, C) or (T, C, H, W), the audio played
    meanwhile as float32 (channels, samples), and the video's fps."""
    from ... import empty, float32, from_numpy
    with _av().open(path) as container:
        stream = container.streams.video[0]
        fps = float(stream.average_rate)
        frames = []
        for i, frame in enumerate(container.decode(stream)):
            if i >= start:
                frames.append(frame.to_ndarray(format="rgb24"))
            if i >= end:
                break
    video = np.stack(frames)
    if channels_first:
        video = video.transpose(0, 3, 1, 2)
    audio = _decode_audio(path, start / fps, (end + 1) / fps)
    audio = from_numpy(audio) if audio is not None else empty((1, 0), dtype=float32)
    return from_numpy(np.ascontiguousarray(video)), audio, fps


def _decode_audio(path, start_sec, end_sec):
    try:
        with _av().open(path) as container:
            if not container.streams.audio:
                return None
            stream = container.streams.audio[0]
            chunks = []
            for frame in container.decode(stream):
                t = float(frame.pts * stream.time_base) if frame.pts is not None else 0.0
                if t >= end_sec:
                    break
                if t + frame.samples / frame.sample_rate > start_sec:
                    samples = frame.to_ndarray()
                    # packed formats come as (1, samples * channels)
                    chunks.append(samples.reshape(len(frame.layout.channels), -1))
    except Exception:  # torchvision also returns no audio when it cannot be decoded
        return None
    return np.concatenate(chunks, axis=1).astype(np.float32) if chunks else None


class VideoClips:
    def __init__(self, video_paths, clip_length_in_frames=16, frames_between_clips=1,
                 frame_rate=None, _precomputed_metadata=None, num_workers=0, _video_width=0,
                 _video_height=0, _video_min_dimension=0, _video_max_dimension=0,
                 _audio_samples=0, _audio_channels=0, output_format="THWC"):
        self.video_paths = video_paths
        self.num_workers = num_workers
        self._video_width, self._video_height = _video_width, _video_height
        self._video_min_dimension = _video_min_dimension
        self._video_max_dimension = _video_max_dimension
        self._audio_samples, self._audio_channels = _audio_samples, _audio_channels
        self.output_format = output_format.upper()
        if self.output_format not in ("THWC", "TCHW"):
            raise ValueError("output_format should be either 'THWC' or 'TCHW', got "
                             f"{output_format}.")
        if _precomputed_metadata is None:
            self._compute_frame_pts()
        else:
            self._init_from_metadata(_precomputed_metadata)
        self.compute_clips(clip_length_in_frames, frames_between_clips, frame_rate)

    def _compute_frame_pts(self):
        from ... import as_tensor, long
        from ...utils.data import DataLoader
        self.video_pts, self.video_fps = [], []
        loader = DataLoader(_VideoTimestampsDataset(self.video_paths), batch_size=16,
                            num_workers=self.num_workers, collate_fn=_collate_fn)
        for batch in loader:
            for pts, fps in batch:
                self.video_pts.append(as_tensor(pts, dtype=long))
                self.video_fps.append(fps)

    def _init_from_metadata(self, metadata):
        self.video_paths = metadata["video_paths"]
        assert len(self.video_paths) == len(metadata["video_pts"])
        self.video_pts = metadata["video_pts"]
        assert len(self.video_paths) == len(metadata["video_fps"])
        self.video_fps = metadata["video_fps"]

    @property
    def metadata(self):
        return {"video_paths": self.video_paths, "video_pts": self.video_pts,
                "video_fps": self.video_fps}

    def subset(self, indices):
        metadata = {key: [values[i] for i in indices] for key, values in self.metadata.items()}
        return type(self)(
            metadata["video_paths"], clip_length_in_frames=self.num_frames,
            frames_between_clips=self.step, frame_rate=self.frame_rate,
            _precomputed_metadata=metadata, num_workers=self.num_workers,
            _video_width=self._video_width, _video_height=self._video_height,
            _video_min_dimension=self._video_min_dimension,
            _video_max_dimension=self._video_max_dimension,
            _audio_samples=self._audio_samples, _audio_channels=self._audio_channels,
            output_format=self.output_format)

    @staticmethod
    def compute_clips_for_video(video_pts, num_frames, step, fps, frame_rate=None):
        """(clips: rows of frame pts, resampling indices per clip) for one video."""
        fps = fps or 1
        frame_rate = frame_rate or fps
        total_frames = len(video_pts) * frame_rate / fps
        idxs = VideoClips._resample_video_idx(int(math.floor(total_frames)), fps, frame_rate)
        clips = unfold(video_pts[idxs], num_frames, step)
        if not clips.numel():
            warnings.warn("There aren't enough frames in the current video to get a clip for "
                          "the given clip length and frames between clips. The video (and "
                          "potentially others) will be skipped.")
        if isinstance(idxs, slice):
            return clips, [idxs] * len(clips)
        return clips, unfold(idxs, num_frames, step)

    def compute_clips(self, num_frames, step, frame_rate=None):
        self.num_frames, self.step, self.frame_rate = num_frames, step, frame_rate
        self.clips, self.resampling_idxs = [], []
        for video_pts, fps in zip(self.video_pts, self.video_fps):
            clips, idxs = self.compute_clips_for_video(video_pts, num_frames, step, fps,
                                                       frame_rate)
            self.clips.append(clips)
            self.resampling_idxs.append(idxs)
        self.cumulative_sizes = np.cumsum([len(c) for c in self.clips], dtype=np.int64).tolist()

    def __len__(self):
        return self.num_clips()

    def num_videos(self):
        return len(self.video_paths)

    def num_clips(self):
        return self.cumulative_sizes[-1]

    def get_clip_location(self, idx):
        video_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        clip_idx = idx if video_idx == 0 else idx - self.cumulative_sizes[video_idx - 1]
        return video_idx, clip_idx

    @staticmethod
    def _resample_video_idx(num_frames, original_fps, new_fps):
        """Every n-th frame (a slice) for whole-number ratios; frame indices otherwise."""
        from ... import from_numpy
        step = original_fps / new_fps
        if float(step).is_integer():
            return slice(None, None, int(step))
        idxs = np.floor(np.arange(num_frames, dtype=np.float32) * np.float32(step))
        return from_numpy(idxs.astype(np.int64))

    def get_clip(self, idx):
        """(video, audio, info, video index) of clip `idx`."""
        if idx >= self.num_clips():
            raise IndexError(f"Index {idx} out of range ({self.num_clips()} number of clips)")
        video_idx, clip_idx = self.get_clip_location(idx)
        clip_pts = self.clips[video_idx][clip_idx]
        start, end = int(clip_pts[0].item()), int(clip_pts[-1].item())
        video, audio, fps = _decode(self.video_paths[video_idx], start, end,
                                    self.output_format == "TCHW")
        info = {"video_fps": fps}
        if self.frame_rate is not None:
            resampling_idx = self.resampling_idxs[video_idx][clip_idx]
            if not isinstance(resampling_idx, slice):
                resampling_idx = resampling_idx - resampling_idx[0]
            video = video[resampling_idx]
            info["video_fps"] = self.frame_rate
        assert len(video) == self.num_frames, f"{video.shape} x {self.num_frames}"
        return video, audio, info, video_idx
