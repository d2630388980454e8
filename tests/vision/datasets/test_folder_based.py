"""EuroSAT, Country211, GTSRB, Imagenette and RenderedSST2 against torchvision over fake
class folders."""
import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets, write_image, \
    write_text

pytest.importorskip("PIL")


def _both(name, *args, **kwargs):
    return getattr(D, name)(*args, **kwargs), getattr(tv_datasets(), name)(*args, **kwargs)


def _class_folders(base, layout, ext):
    for k, (cls, n) in enumerate(layout):
        for i in range(n):
            write_image(base / cls / f"{cls}_{i}{ext}", seed=k * 10 + i)


def test_eurosat_and_country211(tmp_path):
    _class_folders(tmp_path / "eurosat" / "2750", [("Forest", 2), ("River", 1)], ".jpg")
    assert_same_dataset(*_both("EuroSAT", str(tmp_path)), attrs=("classes", "samples"))
    _class_folders(tmp_path / "country211" / "valid", [("AD", 1), ("FR", 2)], ".jpg")
    assert_same_dataset(*_both("Country211", str(tmp_path), "valid"), attrs=("classes",))
    with pytest.raises(RuntimeError, match="^Dataset not found. You can use download=True"):
        D.EuroSAT(str(tmp_path / "none"))


def test_gtsrb(tmp_path):
    base = tmp_path / "gtsrb"
    _class_folders(base / "GTSRB" / "Training", [("00000", 2), ("00001", 1)], ".ppm")
    for i in range(2):
        write_image(base / "GTSRB" / "Final_Test" / "Images" / f"0000{i}.ppm", seed=i)
    write_text(base / "GT-final_test.csv",
               "Filename;Width;Height;ClassId\n00000.ppm;6;5;16\n00001.ppm;6;5;1\n")
    for split in ("train", "test"):
        assert_same_dataset(*_both("GTSRB", str(tmp_path), split), attrs=("_samples",))


def test_imagenette(tmp_path):
    _class_folders(tmp_path / "imagenette2-160" / "val",
                   [("n01440764", 1), ("n03888257", 2)], ".JPEG")
    assert_same_dataset(*_both("Imagenette", str(tmp_path), "val", "160px"),
                        attrs=("classes", "class_to_idx", "wnids"))
    with pytest.raises(RuntimeError, match=r"download it\.$"):
        D.Imagenette(str(tmp_path))


def test_rendered_sst2(tmp_path):
    _class_folders(tmp_path / "rendered-sst2" / "valid", [("negative", 1), ("positive", 2)],
                   ".png")
    assert_same_dataset(*_both("RenderedSST2", str(tmp_path), "val"), attrs=("_samples",))
    with pytest.raises(RuntimeError, match="^Dataset not found"):
        D.RenderedSST2(str(tmp_path), "test")
