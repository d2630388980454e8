"""torchvision's image and video backend switches, as torchvision 0.28 has them."""
import pytest

import ember.vision as vision
from ember.vision.datasets import folder
from tests._torchvision_oracle import import_torchvision


def test_backends_match_torchvision():
    tv = import_torchvision()
    assert vision.get_image_backend() == tv.get_image_backend() == "PIL"
    assert vision.get_video_backend() == tv.get_video_backend()
    for lib in (vision, tv):
        with pytest.raises(ValueError, match="Invalid backend 'cv2'. Options are 'PIL' and "
                                             "'accimage'"):
            lib.set_image_backend("cv2")
        assert lib.set_video_backend("video_reader") is None
        assert lib.disable_beta_transforms_warning() is None


def test_default_loader_follows_the_image_backend(tmp_path, monkeypatch):
    from PIL import Image
    path = tmp_path / "a.png"
    Image.new("L", (3, 2)).save(path)
    image = folder.default_loader(str(path))
    assert image.mode == "RGB" and image.size == (3, 2)
    calls = []
    monkeypatch.setattr(folder, "accimage_loader", lambda p: calls.append(p) or "accimage")
    vision.set_image_backend("accimage")
    try:
        assert folder.default_loader(str(path)) == "accimage" and calls == [str(path)]
    finally:
        vision.set_image_backend("PIL")
