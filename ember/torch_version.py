"""`TorchVersion`: a version string that compares as a version (PEP 440's order), against
strings, tuples such as `(2, 0)`, and `packaging` Version objects, as `torch.__version__`
does: `torch.__version__ >= "2.0"`, `> (1, 13)`. A string that is no version falls back to
plain string comparison, as PyTorch's does. The parser is ember's own (no `packaging`)."""
import functools
import re
from collections.abc import Iterable

__all__ = ["TorchVersion"]

# compiled on the first comparison (1-2 ms of `import ember` otherwise)
_PEP440 = r"""
    v?(?:(?P<epoch>\d+)!)?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>\d+)?)?
    (?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    """
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc",
        "rc": "rc"}
# stand-ins that sort below and above every value, as PEP 440 orders absent segments
_LOW, _HIGH = (-1, ""), (1, "")


class _InvalidVersion(ValueError):
    pass


@functools.cache
def _pep440():
    return re.compile(_PEP440, re.VERBOSE | re.IGNORECASE)


def _sort_key(text):
    """The PEP 440 ordering key of a version string."""
    m = _pep440().fullmatch(text.strip())
    if m is None:
        raise _InvalidVersion(text)
    release = [int(part) for part in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()  # 2.0 == 2.0.0
    pre = (_PRE[m["pre_l"].lower()], int(m["pre_n"] or 0)) if m["pre_l"] else None
    post = m["post_n1"] or m["post_n2"] or ("0" if m["post_l"] else None)
    dev = int(m["dev_n"] or 0) if m["dev_l"] else None
    if pre is None and post is None and dev is not None:
        pre_key = (-1, "", 0)  # 1.0.dev0 sorts before 1.0a0
    elif pre is None:
        pre_key = (1, "", 0)
    else:
        pre_key = (0, *pre)
    post_key = (-1, 0) if post is None else (0, int(post))
    dev_key = (1, 0) if dev is None else (0, dev)
    # local labels: absent sorts first; numeric parts sort above alphanumeric ones
    local = () if m["local"] is None else tuple(
        (1, int(part), "") if part.isdigit() else (0, 0, part.lower())
        for part in re.split(r"[-_.]", m["local"]))
    local_key = (0,) if m["local"] is None else (1, local)
    return (int(m["epoch"] or 0), tuple(release), pre_key, post_key, dev_key, local_key)


def _as_version_text(other):
    if isinstance(other, str):
        return other
    if hasattr(other, "release") and hasattr(other, "public"):  # packaging's Version
        return str(other)
    if isinstance(other, Iterable):
        return ".".join(str(item) for item in other)  # (2, 0) -> "2.0"
    raise _InvalidVersion(other)


class TorchVersion(str):
    __slots__ = ()

    def _compare(self, other, method):
        try:
            mine, theirs = _sort_key(self), _sort_key(_as_version_text(other))
        except _InvalidVersion:
            return getattr(str, method)(self, other)
        return getattr(mine, method)(theirs)

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    # `!=` stays str's, as in PyTorch (TorchVersion("2.0") != "2" is True while == is True too)
    __hash__ = str.__hash__
