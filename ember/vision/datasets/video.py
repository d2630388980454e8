"""Action-recognition video sets (torchvision's hmdb51, ucf101 and kinetics): class folders of
videos cut into fixed-length clips by VideoClips. Items are (video uint8 tensor, audio float32
tensor, class index); HMDB51 and UCF101 pick a fold's train or test videos from their split
files, Kinetics reads root/<split>/<class>/."""
import csv
import glob
import os
import urllib.parse
from functools import partial
from multiprocessing import Pool

from .folder import find_classes, make_dataset
from .utils import check_integrity, download_and_extract_archive, download_url, verify_str_arg
from .video_utils import VideoClips
from .vision import VisionDataset

__all__ = ["HMDB51", "UCF101", "Kinetics"]


class _VideoFolder(VisionDataset):
    """Class folders of videos, clipped, with a fold's subset selected by `_select_fold`."""

    def _clip_fold(self, annotation_path, frames_per_clip, step_between_clips, frame_rate, fold,
                   train, metadata, num_workers, transform, **video_options):
        self.classes, class_to_idx = find_classes(self.root)
        self.samples = make_dataset(self.root, class_to_idx, ("avi",))
        video_paths = [path for path, _ in self.samples]
        self.full_video_clips = VideoClips(video_paths, frames_per_clip, step_between_clips,
                                           frame_rate, metadata, num_workers=num_workers,
                                           **video_options)
        self.fold, self.train = fold, train
        self.indices = self._select_fold(video_paths, annotation_path, fold, train)
        self.video_clips = self.full_video_clips.subset(self.indices)
        self.transform = transform

    @property
    def metadata(self):
        return self.full_video_clips.metadata

    def __len__(self):
        return self.video_clips.num_clips()

    def __getitem__(self, idx):
        video, audio, _, video_idx = self.video_clips.get_clip(idx)
        label = self.samples[self.indices[video_idx]][1]
        if self.transform is not None:
            video = self.transform(video)
        return video, audio, label


class HMDB51(_VideoFolder):
    data_url = "https://serre-lab.clps.brown.edu/wp-content/uploads/2013/10/hmdb51_org.rar"
    splits = {"url": "https://serre-lab.clps.brown.edu/wp-content/uploads/2013/10/"
                     "test_train_splits.rar",
              "md5": "15e67781e70dcfbdce2d7dbb9b3344b5"}
    TRAIN_TAG = 1
    TEST_TAG = 2

    def __init__(self, root, annotation_path, frames_per_clip, step_between_clips=1,
                 frame_rate=None, fold=1, train=True, transform=None,
                 _precomputed_metadata=None, num_workers=1, _video_width=0, _video_height=0,
                 _video_min_dimension=0, _audio_samples=0, output_format="THWC"):
        super().__init__(root)
        if fold not in (1, 2, 3):
            raise ValueError(f"fold should be between 1 and 3, got {fold}")
        self._clip_fold(annotation_path, frames_per_clip, step_between_clips, frame_rate, fold,
                        train, _precomputed_metadata, num_workers, transform,
                        _video_width=_video_width, _video_height=_video_height,
                        _video_min_dimension=_video_min_dimension,
                        _audio_samples=_audio_samples, output_format=output_format)

    def _select_fold(self, video_list, annotations_dir, fold, train):
        """Videos tagged 1 (train) or 2 (test) in the class files <class>_test_split<fold>.txt."""
        target_tag = self.TRAIN_TAG if train else self.TEST_TAG
        selected = set()
        for path in glob.glob(os.path.join(annotations_dir, f"*test_split{fold}.txt")):
            with open(path) as f:
                for line in f.readlines():
                    name, tag = line.split()
                    if int(tag) == target_tag:
                        selected.add(name)
        return [i for i, path in enumerate(video_list) if os.path.basename(path) in selected]


class UCF101(_VideoFolder):
    def __init__(self, root, annotation_path, frames_per_clip, step_between_clips=1,
                 frame_rate=None, fold=1, train=True, transform=None,
                 _precomputed_metadata=None, num_workers=1, _video_width=0, _video_height=0,
                 _video_min_dimension=0, _audio_samples=0, output_format="THWC"):
        super().__init__(root)
        if not 1 <= fold <= 3:
            raise ValueError(f"fold should be between 1 and 3, got {fold}")
        self._clip_fold(annotation_path, frames_per_clip, step_between_clips, frame_rate, fold,
                        train, _precomputed_metadata, num_workers, transform,
                        _video_width=_video_width, _video_height=_video_height,
                        _video_min_dimension=_video_min_dimension,
                        _audio_samples=_audio_samples, output_format=output_format)

    def _select_fold(self, video_list, annotation_path, fold, train):
        """Videos listed ("<class>/<file> [label]") in {train,test}list0<fold>.txt."""
        name = f"{'train' if train else 'test'}list{fold:02d}.txt"
        with open(os.path.join(annotation_path, name)) as f:
            selected = {os.path.join(self.root, *line.strip().split(" ")[0].split("/"))
                        for line in f.readlines()}
        return [i for i, path in enumerate(video_list) if path in selected]


class Kinetics(VisionDataset):
    _TAR_URLS = {
        "400": "https://s3.amazonaws.com/kinetics/400/{split}/k400_{split}_path.txt",
        "600": "https://s3.amazonaws.com/kinetics/600/{split}/k600_{split}_path.txt",
        "700": "https://s3.amazonaws.com/kinetics/700_2020/{split}/k700_2020_{split}_path.txt",
    }
    _ANNOTATION_URLS = {
        "400": "https://s3.amazonaws.com/kinetics/400/annotations/{split}.csv",
        "600": "https://s3.amazonaws.com/kinetics/600/annotations/{split}.csv",
        "700": "https://s3.amazonaws.com/kinetics/700_2020/annotations/{split}.csv",
    }

    def __init__(self, root, frames_per_clip, num_classes="400", split="train", frame_rate=None,
                 step_between_clips=1, transform=None, extensions=("avi", "mp4"),
                 download=False, num_download_workers=1, num_workers=1,
                 _precomputed_metadata=None, _video_width=0, _video_height=0,
                 _video_min_dimension=0, _audio_samples=0, _audio_channels=0, _legacy=False,
                 output_format="TCHW"):
        self.num_classes = verify_str_arg(num_classes, arg="num_classes",
                                          valid_values=["400", "600", "700"])
        self.extensions = extensions
        self.num_download_workers = num_download_workers
        self.root = root
        self._legacy = _legacy
        if _legacy:
            # the old layout: class folders directly under root, frames last
            self.split_folder, self.split, output_format = root, "unknown", "THWC"
            if download:
                raise ValueError("Cannot download the videos using legacy_structure.")
        else:
            self.split_folder = os.path.join(root, split)
            self.split = verify_str_arg(split, arg="split", valid_values=["train", "val", "test"])
        if download:
            self.download_and_process_videos()
        super().__init__(self.root)
        self.classes, class_to_idx = find_classes(self.split_folder)
        self.samples = make_dataset(self.split_folder, class_to_idx, extensions,
                                    is_valid_file=None)
        self.video_clips = VideoClips(
            [path for path, _ in self.samples], frames_per_clip, step_between_clips, frame_rate,
            _precomputed_metadata, num_workers=num_workers, _video_width=_video_width,
            _video_height=_video_height, _video_min_dimension=_video_min_dimension,
            _audio_samples=_audio_samples, _audio_channels=_audio_channels,
            output_format=output_format)
        self.transform = transform

    def download_and_process_videos(self):
        self._download_videos()
        self._make_ds_structure()

    def _download_videos(self):
        if os.path.exists(self.split_folder):
            return
        tar_path = os.path.join(self.root, "tars")
        file_list_path = os.path.join(self.root, "files")
        split_url = self._TAR_URLS[self.num_classes].format(split=self.split)
        split_url_filepath = os.path.join(file_list_path, os.path.basename(split_url))
        if not check_integrity(split_url_filepath):
            download_url(split_url, file_list_path)
        with open(split_url_filepath) as f:
            urls = [urllib.parse.quote(line, safe="/,:") for line in f.read().splitlines()]
        if self.num_download_workers == 1:
            for url in urls:
                download_and_extract_archive(url, tar_path, self.split_folder)
        else:
            with Pool(self.num_download_workers) as pool:
                pool.map(partial(_dl_wrap, tar_path, self.split_folder), urls)

    def _make_ds_structure(self):
        """Moves each downloaded clip into a folder named after its label."""
        annotation_path = os.path.join(self.root, "annotations")
        annotations = os.path.join(annotation_path, f"{self.split}.csv")
        if not check_integrity(annotations):
            download_url(self._ANNOTATION_URLS[self.num_classes].format(split=self.split),
                         annotation_path)
        with open(annotations) as f:
            for row in csv.DictReader(f):
                name = (f"{row['youtube_id']}_{int(row['time_start']):06}_"
                        f"{int(row['time_end']):06}.mp4")
                label = (row["label"].replace(" ", "_").replace("'", "").replace("(", "")
                         .replace(")", ""))
                os.makedirs(os.path.join(self.split_folder, label), exist_ok=True)
                downloaded = os.path.join(self.split_folder, name)
                if os.path.isfile(downloaded):
                    os.replace(downloaded, os.path.join(self.split_folder, label, name))

    @property
    def metadata(self):
        return self.video_clips.metadata

    def __len__(self):
        return self.video_clips.num_clips()

    def __getitem__(self, idx):
        video, audio, _, video_idx = self.video_clips.get_clip(idx)
        label = self.samples[video_idx][1]
        if self.transform is not None:
            video = self.transform(video)
        return video, audio, label


def _dl_wrap(tarpath, videopath, line):
    download_and_extract_archive(line, tarpath, videopath)
