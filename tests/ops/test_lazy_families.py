"""ember/ops/_lazy_families.py lists the names of the op families that load on first use,
so that ember.ops can offer them before importing the family: the list must be exactly what
each family declares (`__all__`, `METHODS`, `FUNCTIONAL`).

Run this file (`python tests/ops/test_lazy_families.py`) to rewrite the list from the
families, after changing one or making another family lazy (add its name to the list with
empty tuples first)."""
import importlib
import inspect
import pathlib
import re
import textwrap

import ember.ops
from ember.ops._lazy_families import COMPRESSED_METHODS, NAMES, SPARSE_METHODS

TABLE = pathlib.Path(ember.ops.__file__).with_name("_lazy_families.py")
HEADER = '''"""The names each lazily loaded op family provides (ember/ops/__init__.py), so that
ember.ops, ember, ember.nn.functional and Tensor can offer them before the family is imported.

Written by `python tests/ops/test_lazy_families.py` from the families themselves, which
tests/ops/test_lazy_families.py checks."""
'''


def declared(family_name):
    family = importlib.import_module(f"ember.ops.{family_name}")
    return tuple(tuple(sorted(getattr(family, attr, ()))) for attr in
                 ("__all__", "METHODS", "FUNCTIONAL"))


def _names(names):
    body = ", ".join(f'"{n}"' for n in names)
    return textwrap.fill(f"({body}{',' if len(names) == 1 else ''}),", width=92,
                         initial_indent=" " * 8, subsequent_indent=" " * 9,
                         break_on_hyphens=False)


def render(family_names):
    lines = [HEADER, "# family: (`__all__`, `METHODS`, `FUNCTIONAL`)", "NAMES = {"]
    for name in family_names:
        lines.append(f'    "{name}": (')
        lines.extend(_names(names) for names in declared(name))
        lines.append("    ),")
    lines.append("}")
    lines.append("# the methods sparse.py and sparse_arith.py bind onto SparseTensor")
    body = ", ".join(f'"{n}"' for n in sparse_methods())
    lines.append(textwrap.fill(f"SPARSE_METHODS = ({body})", width=92,
                               subsequent_indent=" " * 18, break_on_hyphens=False))
    lines.append("# the methods sparse_compressed_methods.py binds onto SparseCompressedTensor")
    body = ", ".join(f'"{n}"' for n in compressed_methods())
    lines.append(textwrap.fill(f"COMPRESSED_METHODS = ({body})", width=92,
                               subsequent_indent=" " * 22, break_on_hyphens=False))
    return "\n".join(lines) + "\n"


def sparse_methods():
    from ember.ops import sparse, sparse_arith
    return tuple(sorted({*sparse.SPARSE_METHODS, *sparse_arith.SPARSE_METHODS}))


def compressed_methods():
    from ember.ops.sparse_compressed_methods import COMPRESSED_METHODS as methods
    return tuple(sorted(methods))


def test_the_lazy_family_table_matches_the_families():
    stale = {name: declared(name) for name in NAMES if NAMES[name] != declared(name)}
    assert not stale, (f"{TABLE} is stale for {sorted(stale)}: rewrite it with "
                       "`python tests/ops/test_lazy_families.py`")
    assert COMPRESSED_METHODS == compressed_methods(), "rewrite it with the command above"
    assert SPARSE_METHODS == sparse_methods(), "rewrite it with the command above"
    assert TABLE.read_text() == render(NAMES), "rewrite it with the command above"


def test_lazy_families_are_families_without_shared_or_special_names():
    assert set(NAMES) <= set(ember.ops.FAMILY_NAMES)
    eager = [importlib.import_module(f"ember.ops.{name}") for name in ember.ops.FAMILY_NAMES
             if name not in NAMES]
    for position, attr in enumerate(("__all__", "METHODS", "FUNCTIONAL")):
        eager_names = {n for family in eager for n in getattr(family, attr, ())}
        lazy_names = [n for names in NAMES.values() for n in names[position]]
        # one holder per name, so no order decides between an eager and a lazy family
        assert len(lazy_names) == len(set(lazy_names)) and not eager_names & set(lazy_names)
    for name in NAMES:
        family = importlib.import_module(f"ember.ops.{name}")
        for method in family.METHODS:
            # dunders stay eager: Python looks them up on the type, and the lazy stand-in is
            # a non-data descriptor (no property or other data descriptor may hide behind it)
            assert not method.startswith("__"), (name, method)
            assert callable(getattr(family, method)) and not hasattr(
                type(getattr(family, method)), "__set__"), (name, method)


if __name__ == "__main__":
    TABLE.write_text(render(NAMES))
    print(f"wrote {TABLE}")


def test_every_property_a_lazy_family_puts_on_tensor_has_a_stand_in():
    """A property set by a lazy family (`Tensor.real = property(...)`) is listed in
    ember.ops.LAZY_PROPERTIES, whose data-descriptor stand-ins make `Tensor.real`,
    `t.imag` and `t.real = v` work before the family loads (without one, `t.real = v` set
    nothing and `t.imag` raised AttributeError)."""
    found = {}
    for name in NAMES:
        source = inspect.getsource(importlib.import_module(f"ember.ops.{name}"))
        for attr in re.findall(r"^Tensor\.(\w+) = property\(", source, re.M):
            found[attr] = name
    assert found == ember.ops.LAZY_PROPERTIES
