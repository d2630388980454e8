"""torchvision's weights API (torchvision.models._api): the `Weights` record and the
`WeightsEnum` of every builder, the model registry (`register_model`, `list_models`,
`get_model`, `get_model_builder`, `get_model_weights`) and `get_weight` by full name.

The enums' contents (URLs, preprocessing presets, metadata, category names) are data read from
torchvision 0.28 by tools/dump_torchvision_weights.py and shipped in `_weights_data/`;
`weights_enum(name, module)` builds one enum class from it. A named weight loads the file its URL
names from the hub cache (`<hub dir>/checkpoints/`): ember downloads nothing.
"""
import fnmatch
import functools
import importlib
import inspect
import json
import os
import sys
import typing
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlparse

__all__ = ["WeightsEnum", "Weights", "get_model", "get_model_builder", "get_model_weights",
           "get_weight", "list_models"]

_DATA_DIR = os.path.join(os.path.dirname(__file__), "_weights_data")


@dataclass
class Weights:
    """One set of pretrained weights: where its file lives (`url`), the preprocessing it
    expects (`transforms`, a constructor: call it to get the preset Module) and `meta`
    (categories, num_params, min_size, metrics, ...)."""
    url: str
    transforms: typing.Callable
    meta: dict

    def __eq__(self, other):
        # Enum members are found again by value when copied or unpickled; two equal
        # functools.partial objects do not compare equal, so compare what they hold.
        if not isinstance(other, Weights):
            return NotImplemented
        if self.url != other.url or self.meta != other.meta:
            return False
        a, b = self.transforms, other.transforms
        if isinstance(a, functools.partial) and isinstance(b, functools.partial):
            return (a.func, a.args, a.keywords) == (b.func, b.args, b.keywords)
        return a == b


class WeightsEnum(Enum):
    """Base of every `<Model>_Weights` enum; each member's value is a `Weights`."""

    @classmethod
    def verify(cls, obj):
        """`obj` as a member of this enum: a member passes, a name ("IMAGENET1K_V1" or
        "ResNet50_Weights.IMAGENET1K_V1") is looked up (KeyError when unknown), None stays."""
        if obj is None:
            return obj
        if type(obj) is str:
            return cls[obj.replace(cls.__name__ + ".", "")]
        if not isinstance(obj, cls):
            raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but "
                            f"received {obj.__class__.__name__}.")
        return obj

    def get_state_dict(self, *args, **kwargs):
        """The state_dict of these weights, from `<hub dir>/checkpoints/<file name of url>`
        (arguments as hub.load_state_dict_from_url's)."""
        return _load_cached_checkpoint(self, *args, **kwargs)

    def __repr__(self):
        return f"{type(self).__name__}.{self._name_}"

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta


def _load_cached_checkpoint(weights, model_dir=None, map_location=None, progress=True,
                            check_hash=False, file_name=None, weights_only=None):
    from ... import hub
    if model_dir is None:
        model_dir = os.path.join(hub.get_dir(), "checkpoints")
    file_name = file_name or os.path.basename(urlparse(weights.url).path)
    path = os.path.join(model_dir, file_name)
    if not os.path.exists(path):
        raise RuntimeError(
            f"{weights!r}: the weights file '{file_name}' is not in the cache, and ember does "
            f"not download it (no network is reachable from here). Download {weights.url} "
            f"elsewhere and put it at {path} (the cache is $TORCH_HOME/hub/checkpoints, "
            "$TORCH_HOME defaulting to ~/.cache/torch).")
    return hub.load_state_dict_from_url(weights.url, model_dir=model_dir,
                                        map_location=map_location, progress=progress,
                                        check_hash=check_hash, file_name=file_name,
                                        weights_only=weights_only)


# ---- the registry -----------------------------------------------------------------------
BUILTIN_MODELS = {}


def register_model(name=None):
    """Decorator: record a builder under `name` (default: its function name)."""
    def wrapper(fn):
        key = name if name is not None else fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError(f"An entry is already registered under the name '{key}'.")
        BUILTIN_MODELS[key] = fn
        return fn
    return wrapper


def _torchvision_module_name(builder):
    """`ember.vision.models.segmentation.fcn` -> the package holding it, as a user sees it."""
    return builder.__module__.rsplit(".", 1)[0]


def list_models(module=None, include=None, exclude=None):
    """Sorted names of the registered builders, those of `module` (a models package such as
    torchvision.models.segmentation) only when given; `include` / `exclude` are fnmatch
    patterns (one or several)."""
    names = {k for k, fn in BUILTIN_MODELS.items()
             if module is None or _torchvision_module_name(fn) == module.__name__}
    if include:
        patterns = [include] if isinstance(include, str) else include
        chosen = set()
        for pattern in patterns:
            chosen |= set(fnmatch.filter(names, pattern))
    else:
        chosen = names
    if exclude:
        for pattern in [exclude] if isinstance(exclude, str) else exclude:
            chosen -= set(fnmatch.filter(names, pattern))
    return sorted(chosen)


def get_model_builder(name):
    name = name.lower()
    try:
        return BUILTIN_MODELS[name]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None


def get_model(name, **config):
    """Build the registered model `name` with `config` as the builder's keyword arguments."""
    return get_model_builder(name)(**config)


def get_model_weights(name):
    """The WeightsEnum class of a builder, given it or its registered name."""
    builder = get_model_builder(name) if isinstance(name, str) else name
    return _get_enum_from_fn(builder)


def _get_enum_from_fn(fn):
    # the enum is the annotation of the builder's `weights` parameter (maybe Optional[...])
    params = inspect.signature(fn).parameters
    if "weights" not in params:
        raise ValueError("The method is missing the 'weights' argument.")
    annotation = params["weights"].annotation
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, WeightsEnum):
            return candidate
    raise ValueError("The WeightsEnum class for the specific method couldn't be retrieved. "
                     "Make sure the typing info is correct.")


def get_weight(name):
    """A weights member by its full name, e.g. "ResNet50_Weights.IMAGENET1K_V1"."""
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    base = importlib.import_module(__name__.rpartition(".")[0])
    # the models package and its sub-packages (segmentation, detection, ...)
    packages = [base] + [m for _, m in inspect.getmembers(base, inspect.ismodule)
                         if getattr(m, "__file__", "").endswith("__init__.py")]
    for package in packages:
        found = package.__dict__.get(enum_name)
        if isinstance(found, type) and issubclass(found, WeightsEnum):
            return found[value_name]
    raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be "
                     "retrieved.")


# ---- the shipped data ---------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _weights_data():
    with open(os.path.join(_DATA_DIR, "weights.json"), encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=None)
def _categories(list_name):
    with open(os.path.join(_DATA_DIR, f"{list_name}.txt"), encoding="utf-8") as f:
        return f.read().splitlines()


def _meta_from_data(meta):
    meta = dict(meta)
    categories = meta.get("categories")
    if isinstance(categories, str) and categories.startswith("@"):
        meta["categories"] = _categories(categories[1:])
    if "min_size" in meta:
        meta["min_size"] = tuple(meta["min_size"])
    return meta


def _transforms_from_data(preset_name, kwargs):
    from ..transforms import _presets
    from ..transforms.functional import InterpolationMode
    kwargs = {k: InterpolationMode(v["InterpolationMode"]) if isinstance(v, dict) else
              tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}
    preset = getattr(_presets, preset_name)
    return functools.partial(preset, **kwargs) if kwargs else preset


def weights_enum(name, module):
    """The WeightsEnum subclass `name` (e.g. "ResNet50_Weights") built from the shipped data,
    its members in torchvision's order, aliases (DEFAULT) included; `module` is the
    defining module's __name__ (for pickling and repr)."""
    try:
        entry = _weights_data()["enums"][name]
    except KeyError:
        raise ValueError(f"no weights data for '{name}'") from None
    members = {}
    for member, value in entry["members"].items():
        if isinstance(value, str):  # an alias: the same Weights object, so Enum aliases it
            members[member] = members[value]
        else:
            members[member] = Weights(url=value["url"],
                                      transforms=_transforms_from_data(*value["transforms"]),
                                      meta=_meta_from_data(value["meta"]))
    return WeightsEnum(name, list(members.items()), module=module,
                       qualname=name)
