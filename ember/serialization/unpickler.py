"""The weights-only unpickler: a small interpreter of pickle opcodes that builds plain data
(numbers, strings, bytes, containers), asks `find_class` for every global and calls only what
it returns, and hands persistent ids (storages) to `persistent_load`.

Why not `pickle.Unpickler` with a `find_class` filter: the C unpickler trusts the sizes a file
gives it. A `LONG_BINPUT 0x10000000` grows its memo table to gigabytes (a 300-byte pickle took
14 s and 4 GB), a string length is allocated before it is read, `BUILD` sets attributes on any
object and `APPENDS` calls methods by name. Here the memo is a dict, every length is held
against the bytes that are left before anything is read, and `BUILD`, `SETITEM(S)`,
`APPEND(S)` reach only the containers and classes the allowlist names, as PyTorch's
weights-only unpickler does. Every protocol (0 to 5) is read, except the opcodes that call or
import by themselves (INST, OBJ, EXT*) and out-of-band buffers.
"""
import codecs
import collections
import pickle
import struct
from pickle import UnpicklingError

__all__ = ["WeightsOnlyUnpickler", "Source", "check_memo_indices"]

_MAX_LINE = 1 << 16  # a text opcode's argument (a global's name, a protocol-0 number)


class Source:
    """Bytes read from a buffer or a file that knows where its data ends, so no read asks
    for more than is there: a length field larger than the rest of the file is an error,
    never an allocation."""

    def __init__(self, data=None, file=None, end=None):
        if data is not None:
            self._data, self._pos, self._end, self._file = bytes(data), 0, len(data), None
        else:
            self._file, self._pos, self._end = file, file.tell(), end

    def remaining(self):
        return self._end - self._pos

    def tell(self):
        return self._pos

    def opcode(self):
        """The next byte, or -1 at the end."""
        if self._pos >= self._end:
            return -1
        if self._file is None:
            self._pos += 1
            return self._data[self._pos - 1]
        return self.read(1)[0]

    def read(self, n, what="pickle data"):
        if n < 0 or n > self._end - self._pos:
            raise UnpicklingError(f"pickle data was truncated: {what} needs {n} bytes, "
                                  f"{self._end - self._pos} are left")
        if self._file is None:
            out = self._data[self._pos:self._pos + n]
        else:
            out = self._file.read(n)
            if len(out) != n:
                raise UnpicklingError("pickle data was truncated: the file ended early")
        self._pos += n
        return out

    def readline(self):
        """One text line (without its newline), at most _MAX_LINE bytes."""
        n = min(_MAX_LINE, self._end - self._pos)
        if self._file is None:
            chunk = self._data[self._pos:self._pos + n]
        else:
            chunk = self._file.read(n)
        cut = chunk.find(b"\n")
        if cut < 0:
            raise UnpicklingError("pickle data was truncated: a line has no end")
        if self._file is not None:
            self._file.seek(self._pos + cut + 1)
        self._pos += cut + 1
        return chunk[:cut]


def _int(fmt, raw):
    return struct.unpack(fmt, raw)[0]


class WeightsOnlyUnpickler:
    """`WeightsOnlyUnpickler(source, find_class, persistent_load, call).load()`.

    `find_class(module, name)` returns an allowed object or raises; `call(func, args)` makes
    every call a REDUCE or NEWOBJ asks for (it holds the function against the allowlist and
    its arguments against what a checkpoint can need); `build_types` lists the classes
    whose instances BUILD may fill (the user's allowed classes)."""

    def __init__(self, source, find_class, persistent_load, call, build_types=(),
                 encoding="ASCII"):
        self.src = source
        self.find_class, self.persistent_load, self.call = find_class, persistent_load, call
        self.build_types = tuple(build_types)
        self.encoding = encoding

    # ---- the stack ----------------------------------------------------------------------
    def _pop(self):
        if not self.stack:
            raise UnpicklingError("unpickling stack underflow")
        return self.stack.pop()

    def _top(self):
        if not self.stack:
            raise UnpicklingError("unpickling stack underflow")
        return self.stack[-1]

    def _pop_mark(self):
        if not self.marks:
            raise UnpicklingError("could not find MARK")
        items, self.stack = self.stack, self.marks.pop()
        return items

    def _string(self, raw):
        if self.encoding == "bytes":
            return raw
        try:
            return raw.decode(self.encoding, "strict")
        except (UnicodeDecodeError, LookupError) as exc:
            raise UnpicklingError(f"a pickled string is not {self.encoding}: {exc}") from None

    def _unicode(self, raw):
        try:
            return str(raw, "utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise UnpicklingError(f"a pickled string is not UTF-8: {exc}") from None

    def _quoted(self, line):
        """A protocol-0 STRING argument: a quoted Python literal."""
        if len(line) < 2 or line[:1] != line[-1:] or line[:1] not in (b"'", b'"'):
            raise UnpicklingError("the STRING opcode argument must be quoted")
        try:
            return self._string(codecs.escape_decode(line[1:-1])[0])
        except ValueError as exc:
            raise UnpicklingError(f"a pickled string is malformed: {exc}") from None

    def _text_int(self, line, long=False):
        text = line.rstrip(b"L") if long else line
        if not long and text in (b"00", b"01"):
            return text == b"01"
        try:
            return int(text)
        except ValueError:
            raise UnpicklingError(f"a pickled integer is malformed: {line[:40]!r}") from None

    def _memo_key(self, index):
        if index < 0:
            raise UnpicklingError("negative memo index")
        return index

    def _get(self, index):
        if index not in self.memo:
            raise UnpicklingError(f"Memo value not found at index {index}")
        self.stack.append(self.memo[index])

    def _put(self, index):
        self.memo[self._memo_key(index)] = self._top()

    def _global(self, module, name):
        if not isinstance(module, str) or not isinstance(name, str):
            raise UnpicklingError("STACK_GLOBAL requires str")
        self.stack.append(self.find_class(module, name))

    # ---- the containers a file may fill ------------------------------------------------
    def _set_items(self, target, items):
        if not isinstance(target, dict) or (type(target) not in (dict, collections.OrderedDict,
                                                                   collections.Counter)
                                            and not isinstance(target, self.build_types)):
            raise UnpicklingError("Can only SETITEM for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(target)}")
        if len(items) % 2:
            raise UnpicklingError("odd number of items for SETITEMS")
        for i in range(0, len(items), 2):
            try:
                target[items[i]] = items[i + 1]
            except TypeError as exc:  # an unhashable key
                raise UnpicklingError(f"a pickled dict key is not usable: {exc}") from None

    def _extend(self, target, items):
        if type(target) is list:
            target.extend(items)
        elif isinstance(target, self.build_types) and hasattr(target, "extend"):
            target.extend(items)
        else:
            raise UnpicklingError(f"Can only append to lists, but got {type(target)}")

    def _add_items(self, target, items):
        if type(target) is not set:
            raise UnpicklingError(f"Can only add items to sets, but got {type(target)}")
        try:
            target.update(items)
        except TypeError as exc:
            raise UnpicklingError(f"a pickled set item is not usable: {exc}") from None

    def _build(self, inst, state):
        if type(inst) is collections.OrderedDict and isinstance(state, dict):
            inst.__dict__.update(state)
        elif isinstance(inst, self.build_types):
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None:
                setstate(state)
                return
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                inst.__dict__.update(state)
            for k, v in (slots or {}).items():
                setattr(inst, k, v)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {type(inst)}")

    # ---- the loop -----------------------------------------------------------------------
    def load(self):
        self.stack, self.marks, self.memo = [], [], {}
        next_opcode, ops = self.src.opcode, _OPS
        while True:
            op = next_opcode()
            if op < 0:
                raise EOFError("Ran out of input")
            handler = ops.get(op)
            if handler is None:
                raise UnpicklingError(f"Unsupported operand {op}" + (
                    f" ({chr(op)!r})" if 32 < op < 127 else ""))
            if handler is _stop:
                if len(self.stack) != 1 or self.marks:
                    raise UnpicklingError("the pickle's STOP leaves a malformed stack")
                return self.stack[0]
            handler(self)


# ---- one function per opcode ----------------------------------------------------------------
def _stop(u):
    pass


def _push(value):
    return lambda u: u.stack.append(value() if callable(value) else value)


def _sized(fmt, size, kind):
    def op(u):
        n = _int(fmt, u.src.read(size, "a length"))
        raw = u.src.read(n, kind)
        u.stack.append(_CONVERT[kind](u, raw))
    return op


_CONVERT = {
    "bytes": lambda u, raw: raw,
    "bytearray": lambda u, raw: bytearray(raw),
    "str": lambda u, raw: u._unicode(raw),
    "py2str": lambda u, raw: u._string(raw),
    "long": lambda u, raw: int.from_bytes(raw, "little", signed=True),
}


def _tuple_n(n):
    def op(u):
        if len(u.stack) < n:
            raise UnpicklingError("unpickling stack underflow")
        items = tuple(u.stack[len(u.stack) - n:])
        del u.stack[len(u.stack) - n:]
        u.stack.append(items)
    return op


def _mark(u):
    u.marks.append(u.stack)
    u.stack = []


def _pop(u):
    if u.stack:
        u.stack.pop()
    else:
        u._pop_mark()


def _reduce(u):
    args = u._pop()
    func = u._pop()
    if not isinstance(args, tuple):
        raise UnpicklingError(f"REDUCE: the arguments are {type(args).__name__}, not a tuple")
    u.stack.append(u.call(func, args))


def _newobj(u):
    args = u._pop()
    cls = u._pop()
    if not isinstance(args, tuple):
        raise UnpicklingError(f"NEWOBJ: the arguments are {type(args).__name__}, not a tuple")
    u.stack.append(u.call(cls, args, new=True))


def _newobj_ex(u):
    kwargs = u._pop()
    args = u._pop()
    cls = u._pop()
    if not isinstance(args, tuple) or not isinstance(kwargs, dict):
        raise UnpicklingError("NEWOBJ_EX: malformed arguments")
    u.stack.append(u.call(cls, args, kwargs, new=True))


def _build(u):
    state = u._pop()
    u._build(u._top(), state)


def _binpersid(u):
    u.stack.append(u.persistent_load(u._pop()))


def _persid(u):
    u.stack.append(u.persistent_load(u._unicode(u.src.readline())))


def _global_text(u):
    module = u._unicode(u.src.readline())
    name = u._unicode(u.src.readline())
    u._global(module, name)


def _stack_global(u):
    name = u._pop()
    module = u._pop()
    u._global(module, name)


def _dup(u):
    u.stack.append(u._top())


def _setitem(u):
    value = u._pop()
    key = u._pop()
    u._set_items(u._top(), [key, value])


def _setitems(u):
    items = u._pop_mark()
    u._set_items(u._top(), items)


def _append(u):
    item = u._pop()
    u._extend(u._top(), [item])


def _appends(u):
    items = u._pop_mark()
    u._extend(u._top(), items)


def _additems(u):
    items = u._pop_mark()
    u._add_items(u._top(), items)


def _push_after_mark(u, kind):
    items = u._pop_mark()  # (first: it replaces u.stack)
    u.stack.append(kind(items))


def _frozenset(u):
    items = u._pop_mark()
    try:
        u.stack.append(frozenset(items))
    except TypeError as exc:
        raise UnpicklingError(f"a pickled set item is not usable: {exc}") from None


def _dict(u):
    items = u._pop_mark()
    d = {}
    u._set_items(d, items)
    u.stack.append(d)


def _proto(u):
    proto = u.src.read(1)[0]
    if proto > pickle.HIGHEST_PROTOCOL:
        raise UnpicklingError(f"unsupported pickle protocol: {proto}")


def _frame(u):
    u.src.read(8, "a frame length")  # frames only group the opcodes that follow


def _text_float(u):
    line = u.src.readline()
    try:
        u.stack.append(float(line))
    except ValueError:
        raise UnpicklingError(f"a pickled float is malformed: {line[:40]!r}") from None


def _memoize(u):
    u.memo[len(u.memo)] = u._top()


_P = pickle
_OPS = {
    _P.STOP[0]: _stop, _P.PROTO[0]: _proto, _P.FRAME[0]: _frame, _P.MARK[0]: _mark,
    _P.POP[0]: _pop, _P.POP_MARK[0]: lambda u: u._pop_mark(), _P.DUP[0]: _dup,
    _P.NONE[0]: _push(None), _P.NEWTRUE[0]: _push(True), _P.NEWFALSE[0]: _push(False),
    _P.EMPTY_TUPLE[0]: _push(()), _P.EMPTY_LIST[0]: _push(list),
    _P.EMPTY_DICT[0]: _push(dict), _P.EMPTY_SET[0]: _push(set),
    _P.BININT[0]: lambda u: u.stack.append(_int("<i", u.src.read(4))),
    _P.BININT1[0]: lambda u: u.stack.append(u.src.read(1)[0]),
    _P.BININT2[0]: lambda u: u.stack.append(_int("<H", u.src.read(2))),
    _P.INT[0]: lambda u: u.stack.append(u._text_int(u.src.readline())),
    _P.LONG[0]: lambda u: u.stack.append(u._text_int(u.src.readline(), long=True)),
    _P.LONG1[0]: _sized("<B", 1, "long"), _P.LONG4[0]: _sized("<i", 4, "long"),
    _P.BINFLOAT[0]: lambda u: u.stack.append(_int(">d", u.src.read(8))),
    _P.FLOAT[0]: _text_float,
    _P.SHORT_BINSTRING[0]: _sized("<B", 1, "py2str"),
    _P.BINSTRING[0]: _sized("<i", 4, "py2str"),
    _P.STRING[0]: lambda u: u.stack.append(u._quoted(u.src.readline())),
    _P.SHORT_BINBYTES[0]: _sized("<B", 1, "bytes"), _P.BINBYTES[0]: _sized("<I", 4, "bytes"),
    _P.BINBYTES8[0]: _sized("<Q", 8, "bytes"), _P.BYTEARRAY8[0]: _sized("<Q", 8, "bytearray"),
    _P.SHORT_BINUNICODE[0]: _sized("<B", 1, "str"), _P.BINUNICODE[0]: _sized("<I", 4, "str"),
    _P.BINUNICODE8[0]: _sized("<Q", 8, "str"),
    _P.UNICODE[0]: lambda u: u.stack.append(
        u._unicode(codecs.raw_unicode_escape_decode(u.src.readline())[0].encode(
            "utf-8", "surrogatepass"))),
    _P.TUPLE[0]: lambda u: _push_after_mark(u, tuple),
    _P.TUPLE1[0]: _tuple_n(1), _P.TUPLE2[0]: _tuple_n(2), _P.TUPLE3[0]: _tuple_n(3),
    _P.LIST[0]: lambda u: _push_after_mark(u, list), _P.DICT[0]: _dict,
    _P.APPEND[0]: _append, _P.APPENDS[0]: _appends, _P.SETITEM[0]: _setitem,
    _P.SETITEMS[0]: _setitems, _P.ADDITEMS[0]: _additems, _P.FROZENSET[0]: _frozenset,
    _P.GLOBAL[0]: _global_text, _P.STACK_GLOBAL[0]: _stack_global,
    _P.REDUCE[0]: _reduce, _P.NEWOBJ[0]: _newobj, _P.NEWOBJ_EX[0]: _newobj_ex,
    _P.BUILD[0]: _build, _P.BINPERSID[0]: _binpersid, _P.PERSID[0]: _persid,
    _P.BINGET[0]: lambda u: u._get(u.src.read(1)[0]),
    _P.LONG_BINGET[0]: lambda u: u._get(_int("<I", u.src.read(4))),
    _P.GET[0]: lambda u: u._get(u._text_int(u.src.readline())),
    _P.BINPUT[0]: lambda u: u._put(u.src.read(1)[0]),
    _P.LONG_BINPUT[0]: lambda u: u._put(_int("<I", u.src.read(4))),
    _P.PUT[0]: lambda u: u._put(u._text_int(u.src.readline())),
    _P.MEMOIZE[0]: _memoize,
}


def check_memo_indices(stream):
    """Before the C unpickler (a `weights_only=False` load) reads the pickle at `stream`'s
    position: every memo index must be below the pickle's length, so a PUT cannot make it
    allocate a table of gigabytes. (A pickler numbers its memo entries from 0; each PUT takes
    2 bytes or more, so a real pickle's indices stay below its length.) The stream is left
    where it was."""
    import pickletools
    start, indices = stream.tell(), []
    try:
        for op, arg, pos in pickletools.genops(stream):
            if op.name in ("PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET", "LONG_BINGET"):
                indices.append(int(arg))
    except (ValueError, EOFError):  # a malformed pickle: the unpickler says what is wrong
        pass
    length = stream.tell() - start
    stream.seek(start)
    for index in indices:
        if not 0 <= index < max(length, 1):
            raise UnpicklingError(f"memo index {index} of a {length}-byte pickle is out of "
                                  "range")
