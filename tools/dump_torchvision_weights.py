"""Maintenance script (not part of ember, never imported by it): reads the weights metadata of
an installed torchvision and writes it as ember's data files under
ember/vision/models/_weights_data/ (weights.json, and one <name>.txt per category list).

Run from the repository root with torch and torchvision installed:
    python tools/dump_torchvision_weights.py
"""
import enum
import json
import pathlib
import sys
from functools import partial

ROOT = pathlib.Path(__file__).resolve().parent.parent
# the repository root, not tests/ (whose tests/multiprocessing would shadow the standard one)
sys.path.insert(0, str(ROOT))
from tests._torchvision_oracle import import_torchvision  # noqa: E402

OUT = ROOT / "ember" / "vision" / "models" / "_weights_data"


def _closure_values(fn, depth=0):
    """The values a decorated builder's wrappers close over, outermost first."""
    for cell in getattr(fn, "__closure__", None) or ():
        value = cell.cell_contents
        yield value
        if callable(value) and depth < 3:
            yield from _closure_values(value, depth + 1)


def main():
    tv = import_torchvision()
    from torchvision.models import get_model_builder, get_model_weights, list_models
    enums, builders, category_lists = {}, {}, {}

    def categories_name(cats):
        key = tuple(cats)
        for name, known in category_lists.items():
            if known == key:
                return name
        name = f"categories_{len(key)}_{len(category_lists)}"
        category_lists[name] = key
        return name

    for model in list_models():
        builder = get_model_builder(model)
        weights_enum = get_model_weights(model)
        module = builder.__module__.removeprefix("torchvision.models.")
        if module.startswith(("quantization.", "optical_flow.")):
            continue  # families ember does not build (it builds classification, segmentation,
            # detection and video)
        legacy = {}
        for value in _closure_values(builder):
            # handle_legacy_interface keeps {weights_param: (pretrained_param, default)}
            if isinstance(value, dict) and all(isinstance(v, tuple) for v in value.values()):
                for param, (old, default) in value.items():
                    if isinstance(default, enum.Enum):
                        default = f"{type(default).__name__}.{default.name}"
                    elif callable(default):
                        default = "<callable>"
                    legacy[param] = [old, default]
        builders[model] = {"module": module, "weights_enum": weights_enum.__name__,
                           "legacy": legacy}
        if weights_enum.__name__ in enums:
            continue
        members = {}
        for name, member in weights_enum.__members__.items():
            if member.name != name:  # an alias (DEFAULT)
                members[name] = member.name
                continue
            w = member.value
            t = w.transforms
            if isinstance(t, partial):
                preset, kwargs = t.func.__name__, dict(t.keywords)
            else:
                preset, kwargs = t.__name__, {}
            for k, v in kwargs.items():
                if isinstance(v, enum.Enum):
                    kwargs[k] = {"InterpolationMode": v.value}
                elif isinstance(v, tuple):
                    kwargs[k] = list(v)
            meta = dict(w.meta)
            if "categories" in meta and meta["categories"] is not None:
                meta["categories"] = "@" + categories_name(meta["categories"])
            members[name] = {"url": w.url, "transforms": [preset, kwargs], "meta": meta}
        enums[weights_enum.__name__] = {"module": module, "members": members}

    OUT.mkdir(exist_ok=True)
    names = {}
    for name, cats in category_lists.items():
        # give the lists the names of their data sets
        pretty = {1000: "imagenet", 91: "coco", 21: "voc", 400: "kinetics400"}.get(len(cats), name)
        if len(cats) == 2 and "person" in cats:
            pretty = "coco_person"
        names[name] = pretty
        (OUT / f"{pretty}.txt").write_text("\n".join(cats) + "\n")
    text = json.dumps({"torchvision": tv.__version__, "enums": enums, "builders": builders},
                      indent=1, sort_keys=False)
    for old, new in names.items():
        text = text.replace(f'"@{old}"', f'"@{new}"')
    (OUT / "weights.json").write_text(text + "\n")
    print(f"{len(enums)} enums, {len(builders)} builders, categories: {sorted(names.values())}")


if __name__ == "__main__":
    main()
