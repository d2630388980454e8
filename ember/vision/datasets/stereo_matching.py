"""Stereo-matching datasets (torchvision.datasets._stereo_matching): CarlaStereo,
Kitti2012Stereo, Kitti2015Stereo, Middlebury2014Stereo, CREStereo, FallingThingsStereo,
SceneFlowStereo, SintelStereo, InStereo2k and ETH3DStereo. Items are (left, right, disparity)
with disparity a float (1, H, W) NumPy array, or (left, right, disparity, valid_mask) for the
sets that carry a validity mask; `transforms` takes and returns (images, disparities, masks)
as pairs (left, right)."""
import functools
import json
import os
import random
import shutil
from abc import ABC, abstractmethod
from glob import glob
from pathlib import Path

import numpy as np

from .utils import _read_pfm, download_and_extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ("CarlaStereo", "Kitti2012Stereo", "Kitti2015Stereo", "Middlebury2014Stereo",
           "CREStereo", "FallingThingsStereo", "SceneFlowStereo", "SintelStereo", "InStereo2k",
           "ETH3DStereo")

_read_pfm_file = functools.partial(_read_pfm, slice_channels=1)


def _open(path):
    from PIL import Image
    return Image.open(path)


class StereoMatchingDataset(ABC, VisionDataset):
    _has_built_in_disparity_mask = False

    def __init__(self, root, transforms=None):
        super().__init__(root=root)
        self.transforms = transforms
        self._images = []
        self._disparities = []

    def _read_img(self, file_path):
        img = _open(file_path)
        return img if img.mode == "RGB" else img.convert("RGB")

    def _scan_pairs(self, paths_left_pattern, paths_right_pattern=None):
        """Sorted (left, right) path pairs from two glob patterns; right is None without one."""
        left_paths = sorted(glob(paths_left_pattern))
        right_paths = (sorted(glob(paths_right_pattern)) if paths_right_pattern
                       else [None] * len(left_paths))
        if not left_paths:
            raise FileNotFoundError("Could not find any files matching the patterns: "
                                    f"{paths_left_pattern}")
        if not right_paths:
            raise FileNotFoundError("Could not find any files matching the patterns: "
                                    f"{paths_right_pattern}")
        if len(left_paths) != len(right_paths):
            raise ValueError(f"Found {len(left_paths)} left files but {len(right_paths)} right "
                             f"files using:\n left pattern: {paths_left_pattern}\n"
                             f"right pattern: {paths_right_pattern}\n")
        return list(zip(left_paths, right_paths))

    @abstractmethod
    def _read_disparity(self, file_path):
        pass

    def __getitem__(self, index):
        imgs = tuple(self._read_img(p) for p in self._images[index])
        (dsp_left, mask_left), (dsp_right, mask_right) = (
            self._read_disparity(p) for p in self._disparities[index])
        dsp_maps, valid_masks = (dsp_left, dsp_right), (mask_left, mask_right)
        if self.transforms is not None:
            imgs, dsp_maps, valid_masks = self.transforms(imgs, dsp_maps, valid_masks)
        if self._has_built_in_disparity_mask or valid_masks[0] is not None:
            return imgs[0], imgs[1], dsp_maps[0], valid_masks[0]
        return imgs[0], imgs[1], dsp_maps[0]

    def __len__(self):
        return len(self._images)


def _abs_pfm(file_path):
    # some sets store disparities as negative numbers
    return np.abs(_read_pfm_file(file_path))


def _scaled_png(file_path, scale, dtype=None):
    """A 16-bit disparity PNG divided by its scale, as (1, H, W)."""
    return (np.asarray(_open(file_path), dtype=dtype)[None, :, :] / scale,
            None) if file_path is not None else (None, None)


class CarlaStereo(StereoMatchingDataset):
    def __init__(self, root, transforms=None):
        super().__init__(root, transforms)
        root = Path(root) / "carla-highres" / "trainingF"
        self._images = self._scan_pairs(str(root / "*" / "im0.png"), str(root / "*" / "im1.png"))
        self._disparities = self._scan_pairs(str(root / "*" / "disp0GT.pfm"),
                                             str(root / "*" / "disp1GT.pfm"))

    def _read_disparity(self, file_path):
        return _abs_pfm(file_path), None


class _KittiStereo(StereoMatchingDataset):
    _has_built_in_disparity_mask = True
    _folder = _left = _right = None

    def __init__(self, root, split="train", transforms=None):
        super().__init__(root, transforms)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        self._root = Path(root) / self._folder / (split + "ing")
        self._images = self._scan_pairs(str(self._root / self._left),
                                        str(self._root / self._right))
        self._disparities = (self._scan_disparities() if split == "train"
                             else [(None, None)] * len(self._images))

    def _read_disparity(self, file_path):
        return _scaled_png(file_path, 256.0)


class Kitti2012Stereo(_KittiStereo):
    _folder, _left, _right = "Kitti2012", "colored_0/*_10.png", "colored_1/*_10.png"

    def _scan_disparities(self):
        return self._scan_pairs(str(self._root / "disp_noc" / "*.png"), None)


class Kitti2015Stereo(_KittiStereo):
    _folder, _left, _right = "Kitti2015", "image_2/*.png", "image_3/*.png"

    def _scan_disparities(self):
        return self._scan_pairs(str(self._root / "disp_occ_0" / "*.png"),
                                str(self._root / "disp_occ_1" / "*.png"))


class Middlebury2014Stereo(StereoMatchingDataset):
    splits = {
        "train": ["Adirondack", "Jadeplant", "Motorcycle", "Piano", "Pipes", "Playroom",
                  "Playtable", "Recycle", "Shelves", "Vintage"],
        "additional": ["Backpack", "Bicycle1", "Cable", "Classroom1", "Couch", "Flowers", "Mask",
                       "Shopvac", "Sticks", "Storage", "Sword1", "Sword2", "Umbrella"],
        "test": ["Plants", "Classroom2E", "Classroom2", "Australia", "DjembeL", "CrusadeP",
                 "Crusade", "Hoops", "Bicycle2", "Staircase", "Newkuba", "AustraliaP", "Djembe",
                 "Livingroom", "Computer"],
    }
    _has_built_in_disparity_mask = True

    def __init__(self, root, split="train", calibration="perfect", use_ambient_views=False,
                 transforms=None, download=False):
        super().__init__(root, transforms)
        verify_str_arg(split, "split", valid_values=("train", "test", "additional"))
        self.split = split
        if calibration:
            verify_str_arg(calibration, "calibration",
                           valid_values=("perfect", "imperfect", "both", None))
            if split == "test":
                raise ValueError("Split 'test' has only no calibration settings, please set "
                                 "`calibration=None`.")
        elif split != "test":
            raise ValueError(f"Split '{split}' has calibration settings, however None was "
                             f"provided as an argument.\nSetting calibration to 'perfect' for "
                             f"split '{split}'. Available calibration settings are: 'perfect', "
                             "'imperfect', 'both'.")
        if download:
            self._download_dataset(root)
        root = Path(root) / "Middlebury2014"
        if not os.path.exists(root / split):
            raise FileNotFoundError(f"The {split} directory was not found in the provided root "
                                    "directory")
        if not any(scene.startswith(s) for scene in os.listdir(root / split)
                   for s in self.splits[split]):
            raise FileNotFoundError("Provided root folder does not contain any scenes from the "
                                    f"{split} split.")
        suffixes = {None: [""], "perfect": ["-perfect"], "imperfect": ["-imperfect"],
                    "both": ["-perfect", "-imperfect"]}[calibration]
        for suffix in suffixes:
            scenes = root / split / ("*" + suffix)
            self._images += self._scan_pairs(str(scenes / "im0.png"), str(scenes / "im1.png"))
            if split == "test":
                self._disparities = [(None, None)] * len(self._images)
            else:
                self._disparities += self._scan_pairs(str(scenes / "disp0.pfm"),
                                                      str(scenes / "disp1.pfm"))
        self.use_ambient_views = use_ambient_views

    def _read_img(self, file_path):
        file_path = Path(file_path)
        if file_path.name == "im1.png" and self.use_ambient_views:
            # the right view under another exposure or lighting, when the scene has them
            views = [p for p in (file_path.parent / "im1E.png", file_path.parent / "im1L.png")
                     if os.path.exists(p)] + [file_path]
            file_path = random.choice(views)
        return super()._read_img(file_path)

    def _read_disparity(self, file_path):
        if file_path is None:
            return None, None
        disparity = _abs_pfm(file_path)
        disparity[disparity == np.inf] = 0  # unknown disparities are stored as infinity
        return disparity, (disparity > 0).squeeze(0)

    def _download_dataset(self, root):
        base_url = "https://vision.middlebury.edu/stereo/data/scenes2014/zip"
        root = Path(root) / "Middlebury2014"
        if self.split != "test":
            split_root = root / self.split
            for scene in self.splits[self.split]:
                for calibration in ("perfect", "imperfect"):
                    name = f"{scene}-{calibration}"
                    if not (split_root / name).exists():
                        download_and_extract_archive(url=f"{base_url}/{name}.zip",
                                                     filename=f"{name}.zip",
                                                     download_root=str(split_root),
                                                     remove_finished=True)
            return
        os.makedirs(root / "test")
        if any(s not in os.listdir(root / "test") for s in self.splits["test"]):
            download_and_extract_archive(
                url="https://vision.middlebury.edu/stereo/submit3/zip/MiddEval3-data-F.zip",
                download_root=str(root), remove_finished=True)
            for scene_dir, scene_names, _ in os.walk(str(root / "MiddEval3/testF")):
                for scene in scene_names:
                    shutil.move(str(Path(scene_dir) / scene), str(root / "test"))
            shutil.rmtree(str(root / "MiddEval3"))


class CREStereo(StereoMatchingDataset):
    _has_built_in_disparity_mask = True

    def __init__(self, root, transforms=None):
        super().__init__(root, transforms)
        root = Path(root) / "CREStereo"
        for part in ("shapenet", "reflective", "tree", "hole"):
            self._images += self._scan_pairs(str(root / part / "*_left.jpg"),
                                             str(root / part / "*_right.jpg"))
            self._disparities += self._scan_pairs(str(root / part / "*_left.disp.png"),
                                                  str(root / part / "*_right.disp.png"))

    def _read_disparity(self, file_path):
        return _scaled_png(file_path, 32.0, np.float32)


class FallingThingsStereo(StereoMatchingDataset):
    def __init__(self, root, variant="single", transforms=None):
        super().__init__(root, transforms)
        root = Path(root) / "FallingThings"
        verify_str_arg(variant, "variant", valid_values=("single", "mixed", "both"))
        variants = {"single": ["single"], "mixed": ["mixed"],
                    "both": ["single", "mixed"]}[variant]
        prefix = {"single": Path("*") / "*", "mixed": Path("*")}
        for v in variants:
            scenes = root / v / prefix[v]
            self._images += self._scan_pairs(str(scenes / "*.left.jpg"),
                                             str(scenes / "*.right.jpg"))
            self._disparities += self._scan_pairs(str(scenes / "*.left.depth.png"),
                                                  str(scenes / "*.right.depth.png"))

    def _read_disparity(self, file_path):
        """Depth (cm / 100 units) to disparity through the camera's focal length and the 6 cm
        baseline."""
        depth = np.asarray(_open(file_path))
        with open(Path(file_path).parent / "_camera_settings.json") as f:
            focal = json.load(f)["camera_settings"][0]["intrinsic_settings"]["fx"]
        baseline, pixel_constant = 6, 100
        return ((baseline * focal * pixel_constant) / depth.astype(np.float32))[None], None


class SceneFlowStereo(StereoMatchingDataset):
    def __init__(self, root, variant="FlyingThings3D", pass_name="clean", transforms=None):
        super().__init__(root, transforms)
        verify_str_arg(variant, "variant", valid_values=("FlyingThings3D", "Driving", "Monkaa"))
        verify_str_arg(pass_name, "pass_name", valid_values=("clean", "final", "both"))
        passes = {"clean": ["frames_cleanpass"], "final": ["frames_finalpass"],
                  "both": ["frames_cleanpass", "frames_finalpass"]}[pass_name]
        root = Path(root) / "SceneFlow" / variant
        prefix = Path("*") if variant == "Monkaa" else Path("*") / "*" / "*"
        for p in passes:
            self._images += self._scan_pairs(str(root / p / prefix / "left" / "*.png"),
                                             str(root / p / prefix / "right" / "*.png"))
            self._disparities += self._scan_pairs(
                str(root / "disparity" / prefix / "left" / "*.pfm"),
                str(root / "disparity" / prefix / "right" / "*.pfm"))

    def _read_disparity(self, file_path):
        return _abs_pfm(file_path), None


class SintelStereo(StereoMatchingDataset):
    _has_built_in_disparity_mask = True

    def __init__(self, root, pass_name="final", transforms=None):
        super().__init__(root, transforms)
        verify_str_arg(pass_name, "pass_name", valid_values=("final", "clean", "both"))
        root = Path(root) / "Sintel" / "training"
        for p in {"final": ["final"], "clean": ["clean"], "both": ["final", "clean"]}[pass_name]:
            self._images += self._scan_pairs(str(root / f"{p}_left" / "*" / "*.png"),
                                             str(root / f"{p}_right" / "*" / "*.png"))
            self._disparities += self._scan_pairs(str(root / "disparities" / "*" / "*.png"),
                                                  None)

    def _get_occlussion_mask_paths(self, file_path):
        path = Path(file_path)
        sample_dir = path.parent.parent.parent
        occlusion = str(sample_dir / "occlusions" / path.parent.name / path.name)
        out_of_frame = str(sample_dir / "outofframe" / path.parent.name / path.name)
        if not os.path.exists(occlusion):
            raise FileNotFoundError(f"Occlusion mask {occlusion} does not exist")
        if not os.path.exists(out_of_frame):
            raise FileNotFoundError(f"Out of frame mask {out_of_frame} does not exist")
        return occlusion, out_of_frame

    def _read_disparity(self, file_path):
        if file_path is None:
            return None, None
        # disparity spread over the colour channels: r * 4 + g / 2**6 + b / 2**14
        r, g, b = np.split(np.asarray(_open(file_path), dtype=np.float32), 3, axis=-1)
        disparity = np.transpose(r * 4 + g / (2 ** 6) + b / (2 ** 14), (2, 0, 1))
        occlusion, out_of_frame = self._get_occlussion_mask_paths(file_path)
        valid = np.logical_and(np.asarray(_open(out_of_frame)) == 0,
                               np.asarray(_open(occlusion)) == 0)
        return disparity, valid


class InStereo2k(StereoMatchingDataset):
    def __init__(self, root, split="train", transforms=None):
        super().__init__(root, transforms)
        root = Path(root) / "InStereo2k" / split
        verify_str_arg(split, "split", valid_values=("train", "test"))
        self._images = self._scan_pairs(str(root / "*" / "left.png"),
                                        str(root / "*" / "right.png"))
        self._disparities = self._scan_pairs(str(root / "*" / "left_disp.png"),
                                             str(root / "*" / "right_disp.png"))

    def _read_disparity(self, file_path):
        return _scaled_png(file_path, 1024.0, np.float32)


class ETH3DStereo(StereoMatchingDataset):
    _has_built_in_disparity_mask = True

    def __init__(self, root, split="train", transforms=None):
        super().__init__(root, transforms)
        verify_str_arg(split, "split", valid_values=("train", "test"))
        root = Path(root) / "ETH3D"
        images = root / ("two_view_training" if split == "train" else "two_view_test")
        self._images = self._scan_pairs(str(images / "*" / "im0.png"),
                                        str(images / "*" / "im1.png"))
        self._disparities = (
            [(None, None)] * len(self._images) if split == "test" else
            self._scan_pairs(str(root / "two_view_training_gt" / "*" / "disp0GT.pfm"), None))

    def _read_disparity(self, file_path):
        if file_path is None:
            return None, None
        mask = np.asarray(_open(Path(file_path).parent / "mask0nocc.png")).astype(bool)
        return _abs_pfm(file_path), mask
