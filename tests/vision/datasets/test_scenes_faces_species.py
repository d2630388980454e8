"""Places365, CLEVRClassification, FER2013 and INaturalist against torchvision over fake
files."""
import json

import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets, write_image, \
    write_text

pytest.importorskip("PIL")


def _both(name, *args, **kwargs):
    return getattr(D, name)(*args, **kwargs), getattr(tv_datasets(), name)(*args, **kwargs)


@pytest.mark.parametrize("split", ["val", "test", "train-standard"])
def test_places365(tmp_path, monkeypatch, split):
    for cls in (D.Places365, tv_datasets().Places365):
        monkeypatch.setattr(cls, "_CATEGORIES_META", (cls._CATEGORIES_META[0], None))
        monkeypatch.setattr(cls, "_FILE_LIST_META", {k: (f, None) for k, (f, _) in
                                                     cls._FILE_LIST_META.items()})
    write_text(tmp_path / "categories_places365.txt", "/a/airfield 0\n/b/bar 1\n")
    write_text(tmp_path / "places365_val.txt", "1.jpg 1\n2.jpg 0\n")
    write_text(tmp_path / "places365_test.txt", "3.jpg\n")
    write_text(tmp_path / "places365_train_standard.txt", "/a/airfield/4.jpg 0\n")
    for k, rel in enumerate(["val_256/1.jpg", "val_256/2.jpg", "test_256/3.jpg",
                             "data_256_standard/a/airfield/4.jpg"]):
        write_image(tmp_path / rel, seed=k)
    assert_same_dataset(*_both("Places365", str(tmp_path), split, small=True),
                        attrs=("classes", "class_to_idx", "targets"))
    with pytest.raises(RuntimeError, match="places365_train_challenge.txt does not exist or is "
                       "corrupted. You can set download=True to download it."):
        D.Places365(str(tmp_path), "train-challenge")


def test_clevr(tmp_path):
    data = tmp_path / "clevr" / "CLEVR_v1.0"
    scenes = []
    for k, n in enumerate([3, 5]):
        write_image(data / "images" / "val" / f"CLEVR_val_{k:06d}.png", seed=k)
        scenes.append({"image_filename": f"CLEVR_val_{k:06d}.png", "objects": [{}] * n})
    write_image(data / "images" / "test" / "CLEVR_test_000000.png", seed=9)
    write_text(data / "scenes" / "CLEVR_val_scenes.json", json.dumps({"scenes": scenes}))
    for split in ("val", "test"):
        assert_same_dataset(*_both("CLEVRClassification", str(tmp_path), split),
                            attrs=("_labels",))


@pytest.mark.parametrize("layout", ["split", "fer", "icml"])
def test_fer2013(tmp_path, monkeypatch, layout):
    for cls in (D.FER2013, tv_datasets().FER2013):
        monkeypatch.setattr(cls, "_RESOURCES", {k: (f, None) for k, (f, _) in
                                                cls._RESOURCES.items()})
    pixels = [" ".join(str((i * 7 + k) % 256) for i in range(48 * 48)) for k in range(3)]
    base = tmp_path / "fer2013"
    if layout == "split":
        write_text(base / "train.csv", "emotion,pixels\n" + "".join(
            f"{k},{p}\n" for k, p in enumerate(pixels)))
        write_text(base / "test.csv", "pixels\n" + pixels[0] + "\n")
    else:
        head = "emotion,pixels,Usage" if layout == "fer" else "emotion, Usage, pixels"
        rows = [(3, "Training", pixels[0]), (1, "PublicTest", pixels[1]),
                (6, "PrivateTest", pixels[2])]
        lines = [f"{e},{p},{u}" if layout == "fer" else f"{e},{u},{p}" for e, u, p in rows]
        write_text(base / ("fer2013.csv" if layout == "fer" else "icml_face_data.csv"),
                   head + "\n" + "\n".join(lines) + "\n")
    for split in ("train", "test"):
        assert_same_dataset(*_both("FER2013", str(tmp_path), split))
    with pytest.raises(RuntimeError, match="train.csv not found in .* or corrupted. You can "
                       "download it from https://www.kaggle.com"):
        D.FER2013(str(tmp_path / "elsewhere"))


def test_inaturalist(tmp_path):
    names = ["00000_Animalia_Chordata_Aves_Passeriformes_Corvidae_Corvus_corax",
             "00001_Animalia_Chordata_Aves_Passeriformes_Paridae_Parus_major",
             "00002_Plantae_Tracheophyta_Magnoliopsida_Rosales_Rosaceae_Rosa_canina"]
    for k, name in enumerate(names):
        write_image(tmp_path / "2021_valid" / name / f"{k}.jpg", seed=k)
    for target_type in ("full", ["family", "kingdom", "full"]):
        ours, theirs = _both("INaturalist", str(tmp_path), "2021_valid", target_type)
        assert_same_dataset(ours, theirs, attrs=("categories_index", "categories_map"))
        assert ours.category_name("family", 1) == theirs.category_name("family", 1)
    for k, rel in enumerate(["Aves/2", "Aves/0", "Plantae/1"]):
        write_image(tmp_path / "2019" / rel / f"{k}.jpg", seed=k)
    assert_same_dataset(*_both("INaturalist", str(tmp_path), "2019", ["super", "full"]),
                        attrs=("all_categories", "categories_map"))
    with pytest.raises(ValueError, match="Unknown value 'super' for argument target_type"):
        D.INaturalist(str(tmp_path), "2021_valid", "super")
