"""The fuzz test's reference: what a (damaged) checkpoint says, decoded by means independent of
ember's loader, and PyTorch's rules for when it says nothing valid.

`record(data)` reads a pickle with Python's pure-Python unpickler into a tree of `Global`,
`Call` and `Pid` nodes (nothing is imported or called). `decode(blob)` takes a whole file
(zip through Python's zipfile, or the legacy layout by hand) and evaluates that tree with
NumPy into a normalized value, or raises `Invalid` where PyTorch refuses the file, or
`Unmodeled` where it would take a model of more than the fuzz bases use. `normalize(obj)`
turns what ember loaded into the same form, so the two compare with ==.
"""
import collections
import io
import pickle
import zipfile

import numpy as np

import ember
from ember import dtypes as _dt

_STORAGE = {d._storage_type: d for d in _dt.ALL_DTYPES}
_DTYPES = {str(d).split(".")[-1]: d for d in _dt.ALL_DTYPES}
_INT64_MAX = (1 << 63) - 1
_V3_DTYPES = {str(d).split(".")[-1]: d for d in _dt.ALL_DTYPES + (_dt.uint16, _dt.uint32,
                                                                   _dt.uint64)}
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


class Invalid(Exception):
    """PyTorch refuses this file."""


class Unmodeled(Exception):
    """The file says something the reference does not model."""


class Global:
    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):
        return Call(self, args)

    def key(self):
        return (self.module, self.name)


class Call:
    def __init__(self, func, args):
        self.func, self.args, self.items, self.state = func, args, [], None

    def __call__(self, *args):  # a call of what a call returned (a nested reduce)
        return Call(self, args)

    def __setitem__(self, k, v):
        self.items.append((k, v))

    def __setstate__(self, state):
        self.state = state


class Pid:
    def __init__(self, pid):
        self.pid = pid


class _Recorder(pickle._Unpickler):
    """Python's own unpickler, with globals and storages as inert nodes."""

    dispatch = dict(pickle._Unpickler.dispatch)
    for _op in (pickle.INST, pickle.OBJ, pickle.NEWOBJ, pickle.NEWOBJ_EX, pickle.EXT1,
                pickle.EXT2, pickle.EXT4, pickle.NEXT_BUFFER, pickle.READONLY_BUFFER,
                pickle.PERSID):
        dispatch[_op[0]] = lambda self, _op=_op: (_ for _ in ()).throw(Invalid(f"opcode {_op}"))

    def __init__(self, file):
        super().__init__(file, encoding="utf-8")
        self._globals = {}

    def find_class(self, module, name):
        return self._globals.setdefault((module, name), Global(module, name))

    def persistent_load(self, pid):
        return Pid(pid)


def record(stream):
    """The tree of the pickle at `stream`'s position (the stream is left after it)."""
    try:
        return _Recorder(stream).load()
    except (Invalid, Unmodeled):
        raise
    except Exception as exc:  # noqa: BLE001 (any failure of Python's unpickler: invalid)
        raise Invalid(f"pickle: {type(exc).__name__}: {exc}") from None


# ---- evaluating a tree ------------------------------------------------------------------------
def _ints(value):
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise Invalid("not a tuple of ints")
    if any(abs(v) > _INT64_MAX for v in value):
        raise Invalid("int64 overflow")
    return tuple(value)


def _tensor(array, offset, size, stride, requires_grad):
    """A view as PyTorch's set_ checks it, normalized."""
    size, stride = _ints(size), _ints(stride)
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0 \
            or offset > _INT64_MAX:
        raise Invalid("offset")
    if len(size) != len(stride) or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise Invalid("size/stride")
    n = nonzero = 1
    for s in size:
        n *= s
        nonzero *= max(s, 1)
    if nonzero * array.itemsize > _INT64_MAX:
        raise Invalid("numel overflow")
    if n and offset + 1 + sum((s - 1) * st for s, st in zip(size, stride)) > array.size:
        raise Invalid("out of bounds")
    dtype = _dt.FROM_NUMPY[array.dtype]
    if not isinstance(requires_grad, bool) or (
            requires_grad and not (dtype.is_floating_point or dtype.is_complex)):
        raise Invalid("requires_grad")
    if n:
        values = np.lib.stride_tricks.as_strided(array[offset:], size,
                                                 [s * array.itemsize for s in stride])
        raw = np.ascontiguousarray(values).tobytes()
    else:
        raw = b""
    return ("T", str(dtype), size, raw, requires_grad)


class _Evaluator:
    def __init__(self, storages, little):
        self.storages, self.little, self.arrays, self.memo = storages, little, {}, {}

    def storage(self, pid):
        if not isinstance(pid, tuple) or len(pid) < 5 or pid[0] != "storage":
            raise Invalid("persistent id")
        if len(pid) > 5 and pid[5] is not None:
            raise Unmodeled("legacy view")
        kind, stype, key, location, numel = pid[:5]
        if isinstance(stype, Global) and stype.key() == ("torch.storage", "UntypedStorage"):
            stype = Global("torch", "ByteStorage")  # bytes, read as a v3 record's dtype
        if not isinstance(stype, Global) or stype.module != "torch" \
                or stype.name not in _STORAGE:
            raise Invalid("storage type")
        if not isinstance(key, str) or not isinstance(location, str):
            raise Invalid("key/location")
        if location != "cpu":
            raise Unmodeled("location")
        dtype = _STORAGE[stype.name]
        if not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
            raise Invalid("numel")
        if key not in self.arrays:
            raw = self.storages(key)
            if len(raw) != numel * dtype.itemsize:
                raise Invalid("record size")
            order = "<" if self.little else ">"
            self.arrays[key] = np.frombuffer(raw, dtype.np.newbyteorder(order)).astype(dtype.np)
        return self.arrays[key]

    def value(self, node):
        """(memoized by identity: a pickle may share one object many times over)"""
        if id(node) not in self.memo:
            self.memo[id(node)] = (self._value(node), node)  # (node kept: ids stay unique)
        return self.memo[id(node)][0]

    def _value(self, node):
        if isinstance(node, Call):
            return self.call(node)
        if isinstance(node, Global):
            if node.module == "torch" and node.name in _DTYPES:
                return ("dtype", str(_DTYPES[node.name]))
            if node.module == "torch" and node.name in _STORAGE:
                return ("global", f"torch.{node.name}")
            raise Unmodeled(f"global {node.key()} as a value")
        if isinstance(node, Pid):
            raise Unmodeled("a bare storage")
        if isinstance(node, collections.OrderedDict):
            raise Unmodeled("odict")
        if isinstance(node, dict):
            return ("dict", [(self.value(k), self.value(v)) for k, v in node.items()])
        if isinstance(node, list):
            return ("list", [self.value(v) for v in node])
        if isinstance(node, tuple):
            return ("tuple", [self.value(v) for v in node])
        if isinstance(node, (set, frozenset)):
            raise Unmodeled("set")
        if isinstance(node, float):
            return ("float", node.hex())
        if node is None or isinstance(node, (bool, int, str, bytes)):
            return (type(node).__name__, node)
        raise Unmodeled(type(node).__name__)

    def call(self, node):
        key, args = node.func.key() if isinstance(node.func, Global) else None, node.args
        if key is None or not isinstance(args, tuple):
            raise Invalid("call")
        if node.state is not None and (key != ("collections", "OrderedDict")
                                       or not isinstance(node.state, dict)):
            raise Invalid("BUILD")
        if node.items and key != ("collections", "OrderedDict"):
            raise Invalid("SETITEMS")
        if key == ("collections", "OrderedDict"):
            if args:
                raise Unmodeled("OrderedDict(args)")
            return ("odict", [(self.value(k), self.value(v)) for k, v in node.items])
        if key == ("torch._utils", "_rebuild_tensor_v2"):
            if not 6 <= len(args) <= 7:
                raise Invalid("arity")
            if not isinstance(args[0], Pid):
                raise Invalid("storage")
            array = self.storage(args[0].pid)
            return _tensor(array, args[1], args[2], args[3], args[4])
        if key == ("torch._utils", "_rebuild_tensor_v3"):
            if not 7 <= len(args) <= 8:
                raise Invalid("arity")
            if not isinstance(args[0], Pid):
                raise Invalid("storage")
            dtype = args[6]
            if not (isinstance(dtype, Global) and dtype.module == "torch"
                    and dtype.name in _V3_DTYPES):
                raise Invalid("v3 dtype")
            array = self.storage(args[0].pid).reshape(-1).view(np.uint8)
            target = _V3_DTYPES[dtype.name]
            if array.nbytes % target.itemsize:
                raise Invalid("v3 bytes")
            return _tensor(array.view(target.np), args[1], args[2], args[3], args[4])
        if key == ("torch._utils", "_rebuild_parameter"):
            if not 2 <= len(args) <= 3:
                raise Unmodeled("parameter arity")
            data = args[0]
            if not (isinstance(data, Call) and isinstance(data.func, Global) and
                    data.func.key()[0] == "torch._utils" and "tensor" in data.func.name):
                raise Invalid("parameter data")
            t = self.call(data)
            if not isinstance(args[1], bool) or (args[1] and not (
                    "float" in t[1] or "complex" in t[1])):
                raise Invalid("requires_grad")
            return ("P", t, args[1])
        if key == ("_codecs", "encode"):
            if len(args) == 2 and isinstance(args[0], str) and args[1] == "latin1":
                try:
                    return ("bytes", args[0].encode("latin1"))
                except UnicodeEncodeError:
                    raise Invalid("latin1") from None
            raise Unmodeled("encode")
        raise Unmodeled(f"call of {key}")


# ---- whole files -------------------------------------------------------------------------------
def _zip_storages(zf, prefix):
    def read(key):
        name = f"{prefix}data/{key}"
        try:
            info = zf.getinfo(name)
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise Invalid("compression")
            with zf.open(info) as f:
                f._expected_crc = None  # PyTorch does not check CRC-32 either
                return f.read()
        except (KeyError, zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
                NotImplementedError) as exc:  # (RuntimeError: an encrypted record)
            raise Invalid(f"record {name}: {exc}") from None
    return read


def decode(blob):
    """The normalized value the file holds, or Invalid / Unmodeled."""
    if blob[:4] == b"PK\x03\x04" or zipfile.is_zipfile(io.BytesIO(blob)):
        try:
            zf = zipfile.ZipFile(io.BytesIO(blob))
            names = zf.namelist()
        except Exception as exc:  # noqa: BLE001
            raise Invalid(f"zip: {exc}") from None
        prefix = names[0][:names[0].index("/") + 1] if names and "/" in names[0] else ""
        if not prefix or not all(n.startswith(prefix) for n in names):
            raise Invalid("a record outside the archive's folder")
        pkl = prefix + "data.pkl"
        if pkl not in names:
            raise Invalid("no data.pkl")
        read = _zip_storages(zf, prefix)
        try:
            little = True
            if f"{prefix}byteorder" in names:
                order = _read_plain(zf, f"{prefix}byteorder")
                if order not in (b"little", b"big"):
                    raise Invalid("byteorder")
                little = order == b"little"
            tree = record(io.BytesIO(_read_plain(zf, pkl)))
        except (KeyError, zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
                NotImplementedError) as exc:
            raise Invalid(f"zip records: {exc}") from None
        return _Evaluator(read, little).value(tree)
    return _decode_legacy(io.BytesIO(blob))


def _read_plain(zf, name):
    with zf.open(zf.getinfo(name)) as f:
        f._expected_crc = None
        return f.read()


def _pids(node, found, seen=None):
    """Every storage persistent id in a tree: key -> pid."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return found
    seen.add(id(node))
    if isinstance(node, Pid):
        if isinstance(node.pid, tuple) and len(node.pid) >= 5 and isinstance(node.pid[2], str):
            found.setdefault(node.pid[2], node.pid)
    elif isinstance(node, Call):
        for part in (node.args, node.items, node.state):
            _pids(part, found, seen)
    elif isinstance(node, dict):
        for k, v in node.items():
            _pids(k, found, seen)
            _pids(v, found, seen)
    elif isinstance(node, (list, tuple, set, frozenset)):
        for v in node:
            _pids(v, found, seen)
    return found


def _decode_legacy(f):
    if record(f) != LEGACY_MAGIC or record(f) != 1001:
        raise Invalid("magic")
    info = record(f)
    little = info.get("little_endian", True) if isinstance(info, dict) else True
    if not isinstance(little, bool):
        raise Invalid("sys_info")
    tree = record(f)
    keys = record(f)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise Invalid("keys")
    pids = _pids(tree, {})
    if set(keys) != set(pids):
        raise Invalid("keys do not match the storages")
    raw = {}
    for key in keys:
        pid = pids[key]
        if len(pid) > 5 and pid[5] is not None:
            raise Unmodeled("legacy view")
        stype = pid[1]
        if not isinstance(stype, Global) or stype.name not in _STORAGE:
            raise Invalid("storage type")
        itemsize = _STORAGE[stype.name].itemsize
        head = f.read(8)
        if len(head) != 8:
            raise Invalid("eof")
        n = int.from_bytes(head, "little", signed=True)
        if n != pid[4] or n < 0:
            raise Invalid("storage size")
        data = f.read(n * itemsize)
        if len(data) != n * itemsize:
            raise Invalid("eof in storage")
        raw[key] = data
    return _Evaluator(lambda key: raw[key], little).value(tree)


def normalize(obj, memo=None):
    """What ember loaded, in the reference's form (memoized by identity)."""
    memo = {} if memo is None else memo
    if id(obj) not in memo:
        memo[id(obj)] = (_normalize(obj, memo), obj)
    return memo[id(obj)][0]


def _normalize(obj, memo):
    from ember.nn.parameter import Parameter
    if isinstance(obj, Parameter):
        return ("P", normalize(obj.detach(), memo), obj.requires_grad)
    if isinstance(obj, ember.Tensor):
        arr = np.ascontiguousarray(obj.detach()._host())
        return ("T", str(obj.dtype), tuple(obj.shape), arr.tobytes() if arr.size else b"",
                obj.requires_grad)
    if isinstance(obj, collections.OrderedDict):
        return ("odict", [(normalize(k, memo), normalize(v, memo)) for k, v in obj.items()])
    if isinstance(obj, dict):
        return ("dict", [(normalize(k, memo), normalize(v, memo)) for k, v in obj.items()])
    if isinstance(obj, list):
        return ("list", [normalize(v, memo) for v in obj])
    if isinstance(obj, tuple):
        return ("tuple", [normalize(v, memo) for v in obj])
    if isinstance(obj, _dt.dtype):
        return ("dtype", str(obj))
    if isinstance(obj, type) and obj.__module__ == "torch":  # ember's torch.FloatStorage ...
        return ("global", f"torch.{obj.__name__}")
    if isinstance(obj, float):
        return ("float", obj.hex())
    if obj is None or isinstance(obj, (bool, int, str, bytes)):
        return (type(obj).__name__, obj)
    return ("other", type(obj).__name__, repr(obj)[:60])


def fingerprint(value, memo=None):
    """A digest of a normalized value, computed once per shared part (a DAG of shared
    pairs 60 deep is 60 digests, not 2**60 comparisons)."""
    import hashlib
    memo = {} if memo is None else memo
    key = id(value)
    if key not in memo:
        if isinstance(value, (tuple, list)):
            parts = [type(value).__name__] + [fingerprint(v, memo) for v in value]
            digest = hashlib.sha1(repr(parts).encode()).hexdigest()
        else:
            digest = hashlib.sha1(repr((type(value).__name__, value)).encode()).hexdigest()
        memo[key] = (digest, value)
    return memo[key][0]
