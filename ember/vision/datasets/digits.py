"""`Digits`: the 8x8 handwritten digits shipped inside ember, so examples train offline.

1,797 grayscale images of the digits 0-9 (E. Alpaydin and C. Kaynak, UCI Optical Recognition
of Handwritten Digits, test set; CC BY 4.0; the copy scikit-learn distributes), pixels
rescaled from 0..16 to 0..255, split once with a fixed seed into 1,437 training and 360 test
images (data/digits.npz).
"""
import os

import numpy as np

__all__ = ["Digits"]

_FILE = os.path.join(os.path.dirname(__file__), "data", "digits.npz")


class Digits:
    """Like torchvision's MNIST: items are (PIL image 'L' 8x8, int label) before transforms."""

    classes = [f"{i} - {name}" for i, name in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])]

    def __init__(self, root=None, train=True, transform=None, target_transform=None,
                 download=False):
        self.root, self.train = root, train
        self.transform, self.target_transform = transform, target_transform
        split = "train" if train else "test"
        with np.load(_FILE) as data:
            self.data = data[f"{split}_images"]
            self.targets = data[f"{split}_labels"].astype(np.int64)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        from PIL import Image
        img = Image.fromarray(self.data[index], mode="L")
        target = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __repr__(self):
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}",
                 f"    Split: {'Train' if self.train else 'Test'}"]
        if self.transform is not None:
            lines.append("    StandardTransform\n" + f"Transform: {self.transform!r}")
        return "\n".join(lines)
