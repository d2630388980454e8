"""Optical-flow datasets (torchvision.datasets._optical_flow): KittiFlow, Sintel,
FlyingThings3D, FlyingChairs and HD1K. Items are (img1, img2, flow) with flow a float32
(2, H, W) NumPy array, or (img1, img2, flow, valid_flow_mask) for the sets whose ground truth
carries a validity mask (KITTI, HD1K: 16-bit PNGs); flow and mask are None where the split has
no ground truth. `transforms` takes and returns all four."""
import itertools
import os
from abc import ABC, abstractmethod
from glob import glob
from pathlib import Path

import numpy as np

from ...utils.data import ConcatDataset
from ._png import read_png
from .folder import default_loader
from .utils import _read_pfm, verify_str_arg
from .vision import VisionDataset

__all__ = ("KittiFlow", "Sintel", "FlyingThings3D", "FlyingChairs", "HD1K")


class FlowDataset(ABC, VisionDataset):
    # KITTI and HD1K store a validity mask with the flow; the others have none
    _has_builtin_flow_mask = False

    def __init__(self, root, transforms=None, loader=default_loader):
        super().__init__(root=root)
        self.transforms = transforms
        self._flow_list = []
        self._image_list = []
        self._loader = loader

    def _read_img(self, file_name):
        return self._loader(file_name)

    @abstractmethod
    def _read_flow(self, file_name):
        pass

    def __getitem__(self, index):
        img1 = self._read_img(self._image_list[index][0])
        img2 = self._read_img(self._image_list[index][1])
        flow = valid_flow_mask = None
        if self._flow_list:  # empty for the test splits
            flow = self._read_flow(self._flow_list[index])
            if self._has_builtin_flow_mask:
                flow, valid_flow_mask = flow
        if self.transforms is not None:
            img1, img2, flow, valid_flow_mask = self.transforms(img1, img2, flow,
                                                                valid_flow_mask)
        if self._has_builtin_flow_mask or valid_flow_mask is not None:
            return img1, img2, flow, valid_flow_mask
        return img1, img2, flow

    def __len__(self):
        return len(self._image_list)

    def __rmul__(self, v):
        return ConcatDataset([self] * v)


class Sintel(FlowDataset):
    def __init__(self, root, split="train", pass_name="clean", transforms=None,
                 loader=default_loader):
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        verify_str_arg(pass_name, "pass_name", valid_values=("clean", "final", "both"))
        root = Path(root) / "Sintel"
        flow_root = root / "training" / "flow"
        for pass_dir in (["clean", "final"] if pass_name == "both" else [pass_name]):
            image_root = root / ("training" if split == "train" else split) / pass_dir
            for scene in os.listdir(image_root):
                frames = sorted(glob(str(image_root / scene / "*.png")))
                self._image_list += [[a, b] for a, b in zip(frames, frames[1:])]
                if split == "train":
                    self._flow_list += sorted(glob(str(flow_root / scene / "*.flo")))

    def _read_flow(self, file_name):
        return _read_flo(file_name)


class KittiFlow(FlowDataset):
    _has_builtin_flow_mask = True

    def __init__(self, root, split="train", transforms=None, loader=default_loader):
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        root = Path(root) / "KittiFlow" / (split + "ing")
        images1 = sorted(glob(str(root / "image_2" / "*_10.png")))
        images2 = sorted(glob(str(root / "image_2" / "*_11.png")))
        if not images1 or not images2:
            raise FileNotFoundError("Could not find the Kitti flow images. Please make sure the "
                                    "directory structure is correct.")
        self._image_list = [[a, b] for a, b in zip(images1, images2)]
        if split == "train":
            self._flow_list = sorted(glob(str(root / "flow_occ" / "*_10.png")))

    def _read_flow(self, file_name):
        return _read_16bits_png_with_flow_and_valid_mask(file_name)


class FlyingChairs(FlowDataset):
    def __init__(self, root, split="train", transforms=None):
        super().__init__(root=root, transforms=transforms)
        verify_str_arg(split, "split", valid_values=("train", "val"))
        root = Path(root) / "FlyingChairs"
        images = sorted(glob(str(root / "data" / "*.ppm")))
        flows = sorted(glob(str(root / "data" / "*.flo")))
        split_file = root / "FlyingChairs_train_val.txt"
        if not os.path.exists(split_file):
            raise FileNotFoundError("The FlyingChairs_train_val.txt file was not found - please "
                                    "download it from the dataset page (see docstring).")
        # one line per flow: 1 = train, 2 = val
        split_list = np.loadtxt(str(split_file), dtype=np.int32)
        wanted = 1 if split == "train" else 2
        for i in range(len(flows)):
            if split_list[i] == wanted:
                self._flow_list += [flows[i]]
                self._image_list += [[images[2 * i], images[2 * i + 1]]]

    def _read_flow(self, file_name):
        return _read_flo(file_name)


class FlyingThings3D(FlowDataset):
    def __init__(self, root, split="train", pass_name="clean", camera="left", transforms=None,
                 loader=default_loader):
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        split = split.upper()
        verify_str_arg(pass_name, "pass_name", valid_values=("clean", "final", "both"))
        passes = {"clean": ["frames_cleanpass"], "final": ["frames_finalpass"],
                  "both": ["frames_cleanpass", "frames_finalpass"]}[pass_name]
        verify_str_arg(camera, "camera", valid_values=("left", "right", "both"))
        cameras = ["left", "right"] if camera == "both" else [camera]
        root = Path(root) / "FlyingThings3D"
        for pass_dir, cam, direction in itertools.product(passes, cameras,
                                                          ("into_future", "into_past")):
            image_dirs = sorted(Path(d) / cam for d in glob(str(root / pass_dir / split / "*/*")))
            flow_dirs = sorted(Path(d) / direction / cam
                               for d in glob(str(root / "optical_flow" / split / "*/*")))
            if not image_dirs or not flow_dirs:
                raise FileNotFoundError("Could not find the FlyingThings3D flow images. Please "
                                        "make sure the directory structure is correct.")
            for image_dir, flow_dir in zip(image_dirs, flow_dirs):
                images = sorted(glob(str(image_dir / "*.png")))
                flows = sorted(glob(str(flow_dir / "*.pfm")))
                for i in range(len(flows) - 1):
                    if direction == "into_future":
                        self._image_list += [[images[i], images[i + 1]]]
                        self._flow_list += [flows[i]]
                    else:
                        self._image_list += [[images[i + 1], images[i]]]
                        self._flow_list += [flows[i + 1]]

    def _read_flow(self, file_name):
        return _read_pfm(file_name)


class HD1K(FlowDataset):
    _has_builtin_flow_mask = True

    def __init__(self, root, split="train", transforms=None, loader=default_loader):
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        root = Path(root) / "hd1k"
        if split == "train":
            for seq in range(36):
                flows = sorted(glob(str(root / "hd1k_flow_gt" / "flow_occ" / f"{seq:06d}_*.png")))
                images = sorted(glob(str(root / "hd1k_input" / "image_2" / f"{seq:06d}_*.png")))
                for i in range(len(flows) - 1):
                    self._flow_list += [flows[i]]
                    self._image_list += [[images[i], images[i + 1]]]
        else:
            images1 = sorted(glob(str(root / "hd1k_challenge" / "image_2" / "*10.png")))
            images2 = sorted(glob(str(root / "hd1k_challenge" / "image_2" / "*11.png")))
            self._image_list = [[a, b] for a, b in zip(images1, images2)]
        if not self._image_list:
            raise FileNotFoundError("Could not find the HD1K images. Please make sure the "
                                    "directory structure is correct.")

    def _read_flow(self, file_name):
        return _read_16bits_png_with_flow_and_valid_mask(file_name)


def _read_flo(file_name):
    """A Middlebury .flo file ("PIEH", width, height, then (u, v) float32 pairs) as (2, H, W)."""
    with open(file_name, "rb") as f:
        if np.fromfile(f, "c", count=4).tobytes() != b"PIEH":
            raise ValueError("Magic number incorrect. Invalid .flo file")
        w = np.fromfile(f, "<i4", count=1).item()
        h = np.fromfile(f, "<i4", count=1).item()
        data = np.fromfile(f, "<f4", count=2 * w * h)
    return data.reshape(h, w, 2).transpose(2, 0, 1)


def _read_16bits_png_with_flow_and_valid_mask(file_name):
    """KITTI's flow PNG: channels 0-1 hold flow * 64 + 2**15, channel 2 the validity flag."""
    flow_and_valid = read_png(file_name).astype(np.float32)
    flow = (flow_and_valid[:2] - 2 ** 15) / 64
    return flow, flow_and_valid[2].astype(bool)
