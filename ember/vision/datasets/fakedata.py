"""FakeData: random images and labels, each item seeded by its index so it never changes."""
from .vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index):
        from ... import random as _random
        from ...ops.random_ops import randint, randn
        from ..transforms import ToPILImage
        if index >= len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        # seed from the index, then restore the caller's stream
        rng_state = _random.get_rng_state()
        _random.manual_seed(index + self.random_offset)
        img = randn(*self.image_size)
        target = randint(0, self.num_classes, size=(1,))[0]
        _random.set_rng_state(rng_state)
        img = ToPILImage()(img)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target.item() if hasattr(target, "item") else target

    def __len__(self):
        return self.size
