"""Malformed checkpoints for the fuzz test, made from real `ember.save` outputs.

`case(seed, i)` is the i-th file of a fixed-seed stream: a base checkpoint (state dicts, views
sharing a storage, parameters, nested containers, every storage dtype, the zip format stored
or deflated, pickle protocol 2 or 4, PyTorch's legacy format) damaged one way: bit flips,
overwritten or inserted bytes, truncation, rewritten pickle fields (storage offsets, sizes,
strides, storage class, element count, key, dtype), rewritten byte order, malformed zip
directories (sizes, offsets, compression method, names), legacy-format damage, or hostile
globals (os.system, eval, builtins.__import__, nested reduces, an allowed builtin asked to
allocate). A hostile global's payload would create the file `marker`: the runner checks that
it never exists.
"""
import io
import pickle
import random
import struct
import zipfile

import numpy as np

import ember
from ember.serialization.records import PyTorchFileWriter

from .fuzz_reference import Call, Global, Pid, record

_STORAGE_NAMES = [d._storage_type for d in ember.dtypes.ALL_DTYPES]
_DTYPE_NAMES = [str(d).split(".")[-1] for d in ember.dtypes.ALL_DTYPES] + ["uint16", "uint4"]


def _bases():
    """(name, object, save keyword arguments) of the checkpoints the damage starts from."""
    g = np.random.default_rng(0)
    lin = ember.nn.Linear(3, 2)
    base = ember.arange(12, dtype=ember.float32)
    every = {str(d).split(".")[-1]: ember.tensor(g.integers(0, 2, 3).astype(bool)).to(d)
             if d is ember.bool else ember.tensor(g.normal(size=3)).to(d)
             for d in ember.dtypes.ALL_DTYPES}
    objects = {
        "state_dict": {"w": ember.tensor(g.normal(size=(3, 4)).astype(np.float32)),
                       "b": ember.arange(5), "h": ember.ones(2, 2, dtype=ember.float16)},
        "views": {"base": base, "row": base.view(3, 4)[1], "col": base.view(3, 4)[:, 2],
                  "t": base.view(3, 4).t(), "empty": base[:0], "scalar": base[5]},
        "module": lin.state_dict(),
        "nested": {"opt": {"state": {0: {"step": ember.tensor(3.0),
                                         "exp_avg": ember.zeros(2, 3)}},
                           "param_groups": [{"lr": 0.1, "params": [0]}]},
                   "meta": ("x", 1, 2.5, None, True, b"raw\x00bytes", [1, [2, [3]]])},
        "parameter": {"p": ember.nn.Parameter(ember.ones(3)), "q": ember.zeros(2)},
        "dtypes": every,
    }
    forms = [("zip", {}), ("proto4", {"pickle_protocol": 4}),
             ("legacy", {"_use_new_zipfile_serialization": False})]
    out = []
    for name, obj in objects.items():
        for form, kw in forms:
            out.append((f"{name}/{form}", obj, kw))
    return out


_CACHE = {}


def bases():
    """[(name, file bytes, normalized original value)] (made once per process)."""
    if "bases" not in _CACHE:
        from .fuzz_reference import normalize
        made = []
        for name, obj, kw in _bases():
            buf = io.BytesIO()
            ember.save(obj, buf, **kw)
            made.append((name, buf.getvalue(), normalize(obj)))
            if name.endswith("/zip"):  # the same records, deflated
                made.append((name.replace("/zip", "/deflated"), _deflate(buf.getvalue()),
                             normalize(obj)))
        _CACHE["bases"] = made
    return _CACHE["bases"]


# ---- rebuilding files --------------------------------------------------------------------------
def _deflate(blob):
    src = zipfile.ZipFile(io.BytesIO(blob))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            z.writestr(info.filename, src.read(info))
    return out.getvalue()


def _records(blob):
    z = zipfile.ZipFile(io.BytesIO(blob))
    names = z.namelist()
    prefix = names[0][:names[0].index("/") + 1]
    return prefix, [(n[len(prefix):], z.read(n)) for n in names]


def _rezip(prefix, records):
    out = io.BytesIO()
    writer = PyTorchFileWriter(out, _archive=prefix.rstrip("/"))
    for name, data in records:
        if name not in ("version", ".data/serialization_id") and \
                name not in writer.get_all_written_records():  # (a rename onto another name)
            writer.write_record(name, data, len(data))
    writer.write_end_of_file()
    return out.getvalue()


class _Repickler(pickle._Pickler):
    """Writes a recorded tree back: globals by name, calls as REDUCE, storages by id."""

    dispatch = dict(pickle._Pickler.dispatch)

    def _save_global_node(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[Global] = _save_global_node

    def reducer_override(self, obj):
        if isinstance(obj, Call):
            return (obj.func, obj.args, obj.state, None,
                    iter(obj.items) if obj.items else None)
        return NotImplemented

    def persistent_id(self, obj):
        return obj.pid if isinstance(obj, Pid) else None


def _repickle(tree, protocol=2):
    buf = io.BytesIO()
    _Repickler(buf, protocol).dump(tree)
    return buf.getvalue()


def _split_legacy(blob):
    """The legacy file's five pickles' bytes and the storage bytes after them."""
    f = io.BytesIO(blob)
    parts = []
    for _ in range(5):
        start = f.tell()
        record(f)  # (inert: torch's globals are neither imported nor called)
        parts.append(blob[start:f.tell()])
    return parts, blob[f.tell():]


def _with_pickle(base_blob, edit):
    """The base file with its object pickle's tree changed by `edit(tree)` (which may return
    a replacement tree)."""
    if base_blob[:2] == b"PK":
        prefix, records = _records(base_blob)
        tree = record(io.BytesIO(dict(records)["data.pkl"]))
        tree = edit(tree) or tree
        data = _repickle(tree)
        return _rezip(prefix, [(n, data if n == "data.pkl" else d) for n, d in records])
    parts, tail = _split_legacy(base_blob)
    tree = record(io.BytesIO(parts[3]))
    tree = edit(tree) or tree
    parts[3] = _repickle(tree)
    return b"".join(parts) + tail


def _tensor_calls(node, found, seen=None):
    seen = set() if seen is None else seen
    if id(node) in seen:
        return found
    seen.add(id(node))
    if isinstance(node, Call):
        if isinstance(node.func, Global) and node.func.name.startswith("_rebuild_tensor"):
            found.append(node)
        for part in (node.args, node.items):
            _tensor_calls(part, found, seen)
    elif isinstance(node, dict):
        for v in node.values():
            _tensor_calls(v, found, seen)
    elif isinstance(node, (list, tuple)):
        for v in node:
            _tensor_calls(v, found, seen)
    return found


# ---- the damage --------------------------------------------------------------------------------
def _interesting_int(rng, value):
    return rng.choice([-1, -value - 1 if value else -2, 0, 1, value + 1, value - 1, value * 2,
                       value + 1000, 1 << 31, (1 << 32) - 1, (1 << 62), (1 << 63) - 1,
                       1 << 63, 1 << 70, rng.randrange(-50, 200), 2.0, True, "3", None])


def _rewrite_field(rng, tree):
    calls = _tensor_calls(tree, [])
    if not calls:
        return
    call = rng.choice(calls)
    args = list(call.args)
    field = rng.choice(["offset", "size", "stride", "storage", "numel", "key", "location",
                        "kind", "grad", "dtype", "arity", "storage_arg"])
    if field == "offset":
        args[1] = _interesting_int(rng, args[1])
    elif field in ("size", "stride"):
        at = 2 if field == "size" else 3
        dims = list(args[at])
        how = rng.randrange(4)
        if how == 0 and dims:
            k = rng.randrange(len(dims))
            dims[k] = _interesting_int(rng, dims[k])
        elif how == 1:
            dims.append(rng.choice([1, 2, 0, 5]))
        elif how == 2 and dims:
            dims.pop()
        args[at] = tuple(dims) if rng.random() < 0.9 else rng.choice(["ab", 3, None, [1.5]])
    elif field in ("storage", "numel", "key", "location", "kind"):
        pid_node = args[0]
        if isinstance(pid_node, Pid):
            pid = list(pid_node.pid)
            if field == "storage":
                pid[1] = Global("torch", rng.choice(_STORAGE_NAMES + ["UntypedStorage",
                                                                        "FooStorage"]))
            elif field == "numel":
                pid[4] = _interesting_int(rng, pid[4])
            elif field == "key":
                pid[2] = rng.choice(["0", "1", "2", "99", "../0", "", 0])
            elif field == "location":
                pid[3] = rng.choice(["cuda:0", "meta", "bogus", 7])
            else:
                pid[0] = rng.choice(["module", b"storage", 0])
            pid_node.pid = tuple(pid)  # (shared by the views of that storage, as in a file)
    elif field == "grad":
        args[4] = rng.choice([2, "yes", None, [1], Call(Global("builtins", "set"), ())])
    elif field == "dtype":
        call.func = Global("torch._utils", "_rebuild_tensor_v3")
        args = args[:6] + [Global("torch", rng.choice(_DTYPE_NAMES))]
    elif field == "arity":
        args = args[:rng.randrange(len(args))] if rng.random() < 0.5 else args + [1, 2, 3]
    else:
        args[0] = rng.choice([3, "0", None, (1, 2), Call(Global("builtins", "bytearray"),
                                                         ("ab", "latin1"))])
    call.args = tuple(args)


def _hostile(rng, marker):
    """A pickle that, if anything called what it names, would create `marker`."""
    cmd = f"touch {marker}"
    code = f"open({str(marker)!r}, 'w').close()"
    imp = Call(Global("builtins", "__import__"), ("os",))
    getattr_ = Call(Global("builtins", "getattr"), (imp, "system"))
    choices = [
        Call(Global("os", "system"), (cmd,)),
        Call(Global("posix", "system"), (cmd,)),
        Call(Global("subprocess", "call"), ((cmd,),)),
        Call(Global("builtins", "eval"), (code,)),
        Call(Global("builtins", "exec"), (code,)),
        Call(Global("__builtin__", "eval"), (code,)),
        Call(getattr_, (cmd,)),  # nested reduce: getattr(__import__('os'), 'system')(cmd)
        Call(Global("torch._utils", "_rebuild_tensor_v2"), (Call(Global("os", "system"),
                                                                 (cmd,)), 0, (1,), (1,))),
        Call(Global("torch._tensor", "_rebuild_from_type_v2"),
             (Global("builtins", "eval"), Global("torch", "Tensor"), (code,), None)),
        Call(Global("torch._tensor", "_rebuild_from_type_v2"),
             (Global("builtins", "bytearray"), Global("torch", "Tensor"), (1 << 40,), None)),
        Call(Global("builtins", "bytearray"), (1 << 40,)),
        Call(Global("_codecs", "encode"), ("x" * 64, "zlib_codec")),
        Call(Global("torch", "Tensor"), (1 << 20, 1 << 20)),
        Call(Global("torch", "FloatTensor"), (1 << 40,)),
        Call(Global("torch.storage", "UntypedStorage"), (1 << 40,)),
        Call(Global("torch._utils", "_rebuild_parameter"), (Call(Global("builtins", "eval"),
                                                                 (code,)), True, None)),
        Call(Global("ember.serialization", "load"), (str(marker),)),
        Call(Global("numpy", "load"), (str(marker),)),
        Call(Global("pickle", "loads"), (b"\x80\x02cos\nsystem\n",)),
    ]
    return {"ok": 1, "bad": rng.choice(choices)}


def _pickle_bombs(rng):
    """Raw pickles that ask the unpickler for huge memo tables, strings or depth."""
    return rng.choice([
        b"\x80\x02Nr" + struct.pack("<I", rng.choice([0x10000000, 0xFFFFFFFF, 1 << 31])) + b".",
        b"\x80\x02Nr\x00\x00\x00\x10j" + struct.pack("<I", 0x10000000) + b".",
        b"\x80\x02j" + struct.pack("<I", 0xFFFFFFF0) + b".",
        b"\x80\x02X" + struct.pack("<I", 0xFFFFFFF0) + b"abc.",
        b"\x80\x04\x8d" + struct.pack("<Q", 1 << 60) + b"abc.",
        b"\x80\x04\x95" + struct.pack("<Q", 1 << 62) + b"N.",
        b"\x80\x02" + b"(" * 20000 + b"l" * 20000 + b".",
        b"\x80\x02]" + b"q\x00h\x00\x86" * 60 + b".",  # a pair of pairs of ...: shared, small
        b"\x80\x02\x8a\xff" + b"\xff" * 255 + b".",
        b"\x80\x02I" + b"9" * 5000 + b"\n.",
        b"\x80\x02cos\nsystem\n.",
        b"\x80\x02ctorch\nFloatStorage\nq\x00.",
    ])


def _damage_zip_structure(rng, blob):
    """A central directory, local header or end record field rewritten."""
    b = bytearray(blob)
    eocd = b.rfind(b"PK\x05\x06")
    cd = b.find(b"PK\x01\x02")
    entries = [i for i in range(cd, eocd) if b[i:i + 4] == b"PK\x01\x02"] if cd >= 0 else []
    locals_ = [i for i in range(len(b) - 4) if b[i:i + 4] == b"PK\x03\x04"]
    where = rng.choice(["central", "local", "eocd", "name"])
    if where == "central" and entries:
        at = rng.choice(entries)
        field = rng.choice([(10, "<H"), (20, "<I"), (24, "<I"), (28, "<H"), (30, "<H"),
                            (42, "<I"), (16, "<I")])  # method, sizes, name/extra len, offset
    elif where == "local" and locals_:
        at = rng.choice(locals_)
        field = rng.choice([(8, "<H"), (18, "<I"), (22, "<I"), (26, "<H"), (28, "<H")])
    elif where == "eocd" and eocd >= 0:
        at = eocd
        field = rng.choice([(8, "<H"), (10, "<H"), (12, "<I"), (16, "<I")])
    else:
        at = rng.choice(entries or [0])
        off = at + 46 + rng.randrange(8)
        if off < len(b):
            b[off] = rng.choice(b"./\x00x0")
        return bytes(b)
    off, fmt = field
    old = struct.unpack_from(fmt, b, at + off)[0]
    limit = 0xFFFF if fmt == "<H" else 0xFFFFFFFF
    new = rng.choice([0, 1, old + 1, max(old - 1, 0), old * 2, limit, limit - 1, 8, 12, 14, 99,
                      rng.randrange(limit)]) & limit
    struct.pack_into(fmt, b, at + off, new)
    return bytes(b)


def _damage_legacy(rng, blob):
    parts, tail = _split_legacy(blob)
    how = rng.randrange(6)
    if how == 0:  # a storage's element count
        b = bytearray(tail)
        if len(b) >= 8:
            struct.pack_into("<q", b, 0, rng.choice([-1, 0, 1 << 40, 1 << 62,
                                                     struct.unpack_from("<q", b)[0] + 1]))
        tail = bytes(b)
    elif how == 1:  # the key list
        keys = pickle.loads(parts[4])
        keys = rng.choice([keys[:-1], keys + ["99"], keys + keys[:1], [], "0", [0]])
        parts[4] = pickle.dumps(keys, protocol=2)
    elif how == 2:  # system info
        parts[2] = pickle.dumps(rng.choice([{"little_endian": "yes"}, {"little_endian": False},
                                            None, [1]]), protocol=2)
    elif how == 3:  # magic or protocol
        k = rng.choice([0, 1])
        parts[k] = pickle.dumps(rng.choice([0, 1001, 1000, "x", LEGACY_MAGIC_PLUS]), protocol=2)
    elif how == 4:  # the storages' bytes cut or extended
        tail = tail[:rng.randrange(len(tail) + 1)] if rng.random() < 0.7 else tail + b"\0" * 8
    else:
        return _with_pickle(blob, lambda tree: _rewrite_field(rng, tree))
    return b"".join(parts) + tail


LEGACY_MAGIC_PLUS = 0x1950A86A20F9469CFC6C + 1


def _byteorder(rng, blob):
    prefix, records = _records(blob)
    value = rng.choice([b"big", b"Little", b"", b"little\n", b"middle", b"\xff\xfe", b"LITTLE"])
    records = [(n, value if n == "byteorder" else d) for n, d in records]
    if rng.random() < 0.2:
        records = [(n, d) for n, d in records if n != "byteorder"]
    return _rezip(prefix, records)


def _zip_names(rng, blob):
    prefix, records = _records(blob)
    how = rng.randrange(5)
    if how == 0:  # a storage record renamed
        records = [(n.replace("data/0", rng.choice(["data/00", "data/1", "Data/0", "data/"]))
                    if n == "data/0" else n, d) for n, d in records]
    elif how == 1:  # a second folder holding another data.pkl
        records = records + [("../other/data.pkl", pickle.dumps(5, 2))]
    elif how == 2:  # a record duplicated with other bytes
        extra = [(n, d[::-1]) for n, d in records if n.startswith("data/")][:1]
        out = io.BytesIO()
        src = zipfile.ZipFile(io.BytesIO(blob))
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with zipfile.ZipFile(out, "w") as z:
                for info in src.infolist():
                    z.writestr(info, src.read(info))
                for n, d in extra:
                    z.writestr(prefix + n, d)
        return out.getvalue()
    elif how == 3:  # data.pkl missing
        records = [(n, d) for n, d in records if n != "data.pkl"]
    else:  # a storage record resized
        records = [(n, d + b"\0" * rng.choice([1, 8]) if n.startswith("data/") else d)
                   for n, d in records]
    return _rezip(prefix, records)


def _inflate_bomb(rng, blob):
    """A deflated record that inflates to 32 MiB while its header declares its real size (or
    one that declares 32 MiB for a storage of a few bytes)."""
    src = zipfile.ZipFile(io.BytesIO(blob))
    infos = src.infolist()
    target = rng.choice([i for i in infos if i.filename.endswith(("data.pkl", "data/0"))])
    if "zeros" not in _CACHE:
        _CACHE["zeros"] = b"\0" * (32 << 20)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in infos:
            z.writestr(info.filename, _CACHE["zeros"] if info is target else src.read(info))
    b = bytearray(out.getvalue())
    if rng.random() < 0.7:  # declare the real size in both headers
        name = target.filename.encode()
        for sig, at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
            pos = b.find(sig + b"")
            while pos >= 0:
                name_at = pos + (30 if sig == b"PK\x03\x04" else 46)
                if b[name_at:name_at + len(name)] == name:
                    struct.pack_into("<I", b, pos + at, target.file_size)
                pos = b.find(sig, pos + 4)
    return bytes(b)


KINDS = ["bitflip", "bytes", "truncate", "insert", "field", "field", "field", "byteorder",
         "zip", "zip", "names", "legacy", "hostile", "hostile", "bomb", "inflate"]


def case(seed, i, marker):
    """(label, file bytes, normalized original value or None) of the i-th case."""
    rng = random.Random(seed * 1_000_003 + i)
    name, blob, original = rng.choice(bases())
    kind = rng.choice(KINDS)
    is_zip = blob[:2] == b"PK"
    if kind == "bitflip":
        b = bytearray(blob)
        for _ in range(rng.choice([1, 1, 2, 3, 8])):
            pos = rng.randrange(len(b))
            b[pos] ^= 1 << rng.randrange(8)
        return f"{name} bitflip", bytes(b), original
    if kind == "bytes":
        b = bytearray(blob)
        pos = rng.randrange(len(b))
        n = rng.choice([1, 2, 4, 8])
        b[pos:pos + n] = bytes(rng.choice([0, 0xFF, rng.randrange(256)]) for _ in range(n))
        return f"{name} bytes", bytes(b), original
    if kind == "truncate":
        return f"{name} truncate", blob[:rng.randrange(len(blob))], original
    if kind == "insert":
        pos = rng.randrange(len(blob))
        return (f"{name} insert", blob[:pos] + bytes(rng.randrange(256)
                                                      for _ in range(rng.choice([1, 3, 8])))
                + blob[pos:], original)
    if kind == "field":
        return f"{name} field", _with_pickle(blob, lambda tree: _rewrite_field(rng, tree)), \
            original
    if kind == "byteorder" and is_zip:
        return f"{name} byteorder", _byteorder(rng, blob), original
    if kind == "zip" and is_zip:
        return f"{name} zip", _damage_zip_structure(rng, blob), original
    if kind == "names" and is_zip:
        return f"{name} names", _zip_names(rng, blob), original
    if kind == "legacy" and not is_zip:
        return f"{name} legacy", _damage_legacy(rng, blob), original
    if kind == "inflate" and is_zip and rng.random() < 0.3:
        return f"{name} inflate", _inflate_bomb(rng, blob), original
    if kind == "hostile":
        return f"{name} hostile", _with_pickle(blob, lambda tree: _hostile(rng, marker)), None
    if kind == "bomb":
        data = _pickle_bombs(rng)
        if is_zip and rng.random() < 0.7:
            prefix, records = _records(blob)
            return f"{name} bomb", _rezip(prefix, [(n, data if n == "data.pkl" else d)
                                                   for n, d in records]), None
        return f"{name} bomb", data, None
    return f"{name} field", _with_pickle(blob, lambda tree: _rewrite_field(rng, tree)), original
