"""The C++ that ember writes in its CuPy kernels, run by NumPy over every element at once.

The subset: statements are declarations (`T s = 0`, `ptrdiff_t n = i / rows`), assignments
(`=`, `+=`, `-=`, `*=`) to an output or a local, and `for (int k = a; k < b; k++) { ... }`
(bounds the same for every element, or each its own). Expressions are integer literals,
names (parameters, outputs, locals and the loop index `i`), `+ - * / %`, comparisons,
`&& || !`, the ternary, reads `x[index]` of a `raw` parameter, CUDA's `sqrt`, `exp` and `erf`,
and the casts `T(v)`, `float(v)` and `double(v)`; and pointers into device memory: `T* q =
(T*)addr;` (addr a device address, a uint64) then reads and writes `q[index]` (`=`, `+=`, ...),
which must land inside one live allocation, aligned, and no two elements writing one address
(a race on a GPU). Anything else (literals with a fraction, other C casts, pointer arithmetic,
`if`, other functions) is refused with NotImplementedError, so a kernel the stand-in cannot run
fails loudly here rather than running differently on a GPU.

Evaluation follows C: the usual arithmetic conversions (an int with a float is the float's
type, not float64 as NumPy makes it), integer `/` and `%` truncate toward zero, `int` wraps at
32 bits, one rounding per operation. A ternary, `&&` and `||` evaluate a branch only for the
elements that take it, so a read past an array's end in the branch not taken is never made; a
read that is made out of bounds raises IndexError (an illegal memory access on a GPU)."""
import re

import numpy as np
import scipy.special

_TOKEN = re.compile(r"\s*(?:(\d+\w*(?:\.\d*)?(?:[eE][-+]?\d+)?\w*|\.\d+\w*)|"
                    r"(long\s+long|[A-Za-z_]\w*)|"
                    r"(<=|>=|==|!=|&&|\|\||\+\+|\+=|-=|\*=|[-+*/%<>!?:()\[\]{};,=]))")
# C types a kernel may declare, and their NumPy dtypes ("T": the kernel's type placeholder)
_TYPES = {"int": np.dtype(np.int32), "long long": np.dtype(np.int64),
          "ptrdiff_t": np.dtype(np.int64), "bool": np.dtype(bool),
          "float": np.dtype(np.float32), "double": np.dtype(np.float64), "T": None}
_CASTS = ("T", "float", "double")
_POINTEES = ("T", "float", "double")  # `T*` and the like: what a pointer may point to
_FUNCTIONS = ("sqrt", "exp", "erf")


def refuse(text, why):
    return NotImplementedError(f"the CuPy stand-in cannot run {text!r}: {why}")


def _tokens(text):
    out, pos, text = [], 0, text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise refuse(text, f"unknown syntax at {text[pos:pos + 10]!r}")
        number, word, op = m.groups()
        if number is not None:
            if not number.isdigit():
                raise refuse(text, f"only whole-number literals ({number!r}); pass other "
                                   f"constants as parameters of the kernel's type")
            out.append(("num", int(number)))
        elif word is not None:
            out.append(("word", re.sub(r"\s+", " ", word)))
        else:
            out.append(("op", op))
        pos = m.end()
    return out


class _Parser:
    """Recursive descent over the tokens into tuples: statements ("decl", "assign", "for")
    and expressions ("num", "name", "index", "call", "un", "bin", "?"), which `Evaluation`
    runs."""

    def __init__(self, text):
        self.text, self.toks, self.pos = text, _tokens(text), 0

    def peek(self, k=0):
        return self.toks[self.pos + k] if self.pos + k < len(self.toks) else ("end", None)

    def take(self, kind=None, value=None):
        tok = self.peek()
        if (kind and tok[0] != kind) or (value is not None and tok[1] != value):
            raise refuse(self.text, f"expected {value or kind}, found {tok[1]!r}")
        self.pos += 1
        return tok

    def at(self, value):
        return self.peek()[0] in ("op", "word") and self.peek()[1] == value

    # ---- statements
    def statements(self, until="end"):
        out = []
        while not (self.peek()[0] == "end" if until == "end" else self.at(until)):
            if self.at(";"):
                self.take()
                continue
            out.append(self.statement())
        return out

    def statement(self):
        tok = self.peek()
        if tok == ("word", "for"):
            return self.loop()
        if tok[0] == "word" and tok[1] in _TYPES and self.peek(1)[0] == "word":
            ctype, name = self.take()[1], self.take("word")[1]
            self.take("op", "=")
            node = ("decl", ctype, name, self.expr())
        elif tok[0] == "word" and tok[1] in _POINTEES and self.peek(1) == ("op", "*"):
            ctype = self.take()[1] + self.take()[1]
            name = self.take("word")[1]
            self.take("op", "=")
            node = ("decl", ctype, name, self.expr())
        elif tok[0] == "word" and self.peek(1)[0] == "op" and \
                self.peek(1)[1] in ("=", "+=", "-=", "*="):
            name, op = self.take()[1], self.take()[1]
            node = ("assign", name, op, self.expr())
        elif tok[0] == "word" and self.peek(1) == ("op", "["):  # q[index] = ...: a store
            name = self.take()[1]
            self.take()
            index = self.expr()
            self.take("op", "]")
            op = self.take("op")[1]
            if op not in ("=", "+=", "-=", "*="):
                raise refuse(self.text, f"{op!r} after {name}[...]")
            node = ("store", name, index, op, self.expr())
        else:
            raise refuse(self.text, f"a statement that is not a declaration, an assignment "
                                    f"or a for loop (at {tok[1]!r})")
        if self.peek()[0] != "end":
            self.take("op", ";")
        return node

    def loop(self):
        self.take("word", "for")
        self.take("op", "(")
        self.take("word", "int")
        var = self.take("word")[1]
        self.take("op", "=")
        start = self.expr()
        self.take("op", ";")
        if self.take("word")[1] != var:
            raise refuse(self.text, "a loop condition on another variable")
        self.take("op", "<")
        stop = self.expr()
        self.take("op", ";")
        if self.take("word")[1] != var:
            raise refuse(self.text, "a loop step on another variable")
        self.take("op", "++")
        self.take("op", ")")
        self.take("op", "{")
        body = self.statements(until="}")
        self.take("op", "}")
        return ("for", var, start, stop, body)

    # ---- expressions, by C's precedence
    def expr(self):
        cond = self.binary(0)
        if self.at("?"):
            self.take()
            yes = self.expr()
            self.take("op", ":")
            return ("?", cond, yes, self.expr())
        return cond

    _LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"),
               ("*", "/", "%"))

    def binary(self, level):
        if level == len(self._LEVELS):
            return self.unary()
        node = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in self._LEVELS[level]:
            op = self.take()[1]
            node = ("bin", op, node, self.binary(level + 1))
        return node

    def unary(self):
        if self.at("-") or self.at("!"):
            return ("un", self.take()[1], self.unary())
        return self.primary()

    def primary(self):
        kind, value = self.take()
        if kind == "num":
            return ("num", value)
        if kind == "op" and value == "(" and self.peek()[0] == "word" and \
                self.peek()[1] in _POINTEES and self.peek(1) == ("op", "*"):  # (T*)addr
            ctype = self.take()[1] + self.take()[1]
            self.take("op", ")")
            return ("pointer", ctype, self.unary())
        if kind == "op" and value == "(":
            node = self.expr()
            self.take("op", ")")
            return node
        if kind != "word" or (value in _TYPES and value not in _CASTS):
            raise refuse(self.text, f"unexpected {value!r} (C casts are not run)")
        if self.at("("):
            if value not in _CASTS + _FUNCTIONS:
                raise refuse(self.text, f"a call of {value}")
            self.take()
            arg = self.expr()
            self.take("op", ")")
            return ("call", value, arg)
        if self.at("["):
            self.take()
            index = self.expr()
            self.take("op", "]")
            return ("index", value, index)
        return ("name", value)


def parse_statements(text):
    return _Parser(text).statements()


def parse_expression(text):
    p = _Parser(text.strip().rstrip(";"))
    node = p.expr()
    if p.peek()[0] != "end":
        raise refuse(text, f"trailing {p.peek()[1]!r}")
    return node


def names_in(node):
    """Every name an expression or statement list reads."""
    if isinstance(node, list):
        return set().union(*(names_in(s) for s in node))
    kind = node[0]
    if kind == "name":
        return {node[1]}
    if kind == "index":
        return {node[1]} | names_in(node[2])
    return set().union(*(names_in(c) for c in node[1:] if isinstance(c, (tuple, list))))


def _assigned(statements):
    """The names statements assign (in loops too)."""
    out = set()
    for s in statements:
        if s[0] == "assign":
            out.add(s[1])
        elif s[0] == "for":
            out |= _assigned(s[4])
    return out


def _ctype(v):
    """The C type of a value: a Python int is a C int literal (long long when it needs it)."""
    if isinstance(v, bool):
        return np.dtype(bool)
    if isinstance(v, int):
        return np.dtype(np.int32) if -2 ** 31 <= v < 2 ** 31 else np.dtype(np.int64)
    return np.asarray(v).dtype


def _common(ta, tb):
    """C's usual arithmetic conversions (bool promotes to int; an int with a float converts
    to the float)."""
    ta, tb = (np.dtype(np.int32) if t == bool else t for t in (ta, tb))
    if ta.kind == "f" or tb.kind == "f":
        floats = [t for t in (ta, tb) if t.kind == "f"]
        return max(floats, key=lambda t: t.itemsize)
    if ta.kind == "u" or tb.kind == "u":
        raise NotImplementedError("the CuPy stand-in does not model unsigned arithmetic")
    return max(ta, tb, key=lambda t: t.itemsize)


def _as(v, dtype):
    out = np.asarray(v).astype(dtype, copy=False)
    return out[()] if out.ndim == 0 else out


def _nonnegative(a, b):
    return np.min(a, initial=0) >= 0 and np.min(b, initial=1) > 0


def _truncating_divide(a, b):
    """C's integer a / b (toward zero): floor division where nothing is negative (the
    usual case, and NumPy's fast one by a scalar), else a less C's remainder, exactly."""
    if _nonnegative(a, b):
        return a // b
    return (a - np.fmod(a, b)) // b


def _c_remainder(a, b):
    """C's a % b: the dividend's sign."""
    return a % b if _nonnegative(a, b) else np.fmod(a, b)


def _erf(v):
    return np.asarray(scipy.special.erf(v)).astype(np.asarray(v).dtype)


_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply}
_COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}


class Evaluation:
    """Values of one kernel run: `env` maps names to NumPy scalars or to 1-d arrays of `n`
    elements (one per element still being evaluated), `raw` the flat contents of raw
    parameters, `t` the dtype bound to T. Inside a branch (`restricted`), a name's elements
    are picked from the enclosing run's when first read."""

    def __init__(self, env, raw, t, n, fixed=frozenset(), outer=None, mask=None, memory=None):
        self.env, self.raw, self.t, self.n, self.fixed = env, raw, t, n, fixed
        self.outer, self.mask, self.memory = outer, mask, memory

    def per_element(self, v):
        if isinstance(v, Pointer):
            v = v.addresses
        return isinstance(v, np.ndarray) and v.ndim == 1 and v.shape[0] == self.n

    def restricted(self, mask):
        """The evaluation of the elements `mask` picks (booleans, or indices)."""
        n = int(np.count_nonzero(mask)) if mask.dtype == bool else mask.size
        return Evaluation({}, self.raw, self.t, n, self.fixed, self, mask, self.memory)

    def lookup(self, name):
        if name in self.env:
            return self.env[name]
        if self.outer is None:
            raise NotImplementedError(f"the CuPy stand-in knows no {name!r} here")
        v = self.outer.lookup(name)
        if self.outer.per_element(v):
            v = Pointer(v.addresses[self.mask], v.dtype) if isinstance(v, Pointer) else \
                v[self.mask]
        self.env[name] = v
        return v

    # ---- statements
    def run(self, statements, declared):
        """Run `statements`; `declared` maps the names they may assign (outputs, then locals
        as they are declared) to their dtypes."""
        for s in statements:
            if s[0] == "decl":
                _, ctype, name, expr = s
                if name in self.fixed or name == "i":
                    raise NotImplementedError(f"the CuPy stand-in does not redeclare {name}")
                if ctype.endswith("*"):
                    v = self.value(expr)
                    if not isinstance(v, Pointer) or v.dtype != self.pointee(ctype):
                        raise NotImplementedError(f"{name}: a {ctype} is set from a ({ctype}) "
                                                  f"cast only")
                    declared[name] = ctype
                    self.env[name] = v
                    continue
                dtype = self.t if ctype == "T" else _TYPES[ctype]
                declared[name] = dtype
                self.env[name] = _as(self.value(expr), dtype)
            elif s[0] == "store":
                self.store(*s[1:])
            elif s[0] == "assign":
                _, name, op, expr = s
                if name not in declared or isinstance(declared[name], str):
                    raise NotImplementedError(f"the CuPy stand-in assigns only outputs and "
                                              f"locals (not pointers), not {name}")
                v = self.value(expr)
                if op != "=":
                    v = self.arith(op[0], self.lookup(name), v)
                self.env[name] = _as(v, declared[name])
            else:
                self.loop(*s[1:], declared)

    def pointee(self, ctype):
        return self.t if ctype == "T*" else _TYPES[ctype[:-1]]

    def store(self, name, index, op, expr):
        """name[index] op= expr through a pointer, for every element at once."""
        q = self.lookup(name)
        if not isinstance(q, Pointer):
            raise NotImplementedError(f"the CuPy stand-in writes [] through pointers only, "
                                      f"not into {name}")
        cells = q.cells(self.value(index), self.n, self.memory, write=True)
        v = self.value(expr)
        if op != "=":
            v = self.arith(op[0], cells.read(), v)
        cells.write(_as(v, q.dtype))

    def loop(self, var, start, stop, body, declared):
        """for (int var = start; var < stop; var++) { body }: with bounds the same for every
        element, the body runs on all of them; with bounds per element, pass j runs it on the
        elements with more than j trips (var = start + j for each), and what it assigns to
        names declared outside the loop is written back to those elements (its own locals
        end with the pass)."""
        lo, hi = self.value(start), self.value(stop)
        inner = dict(declared, **{var: np.dtype(np.int32)})
        if not (self.per_element(lo) or self.per_element(hi)):
            for k in range(int(lo), int(hi)):
                self.env[var] = np.int32(k)
                self.run(body, inner)
            return
        lo, hi = (np.broadcast_to(np.asarray(b, np.int64), (self.n,)) for b in (lo, hi))
        outer = _assigned(body) & set(declared)
        trips = hi - lo
        active = np.flatnonzero(trips > 0)
        pass_ = 0
        while active.size:  # pass j runs the elements with more than j trips (cost: the trips)
            part = self.restricted(active)
            part.env[var] = (lo[active] + pass_).astype(np.int32)
            part.run(body, dict(inner))
            for name in outer & set(part.env):
                full = np.array(np.broadcast_to(self.lookup(name), (self.n,)))
                full[active] = part.env[name]
                self.env[name] = full
            pass_ += 1
            active = active[trips[active] > pass_]

    # ---- expressions
    def value(self, node):
        kind = node[0]
        if kind == "num":
            return node[1]
        if kind == "name":
            return self.lookup(node[1])
        if kind == "index":
            return self.read(node[1], self.value(node[2]))
        if kind == "call":
            return self.call(node[1], self.value(node[2]))
        if kind == "pointer":
            v = self.value(node[2])
            if _ctype(v) != np.dtype(np.uint64):
                raise NotImplementedError(f"a ({node[1]}) cast of a {_ctype(v)} value: "
                                          f"addresses are uint64")
            return Pointer(v, self.pointee(node[1]))
        if kind == "un":
            v = self.value(node[2])
            if node[1] == "!":
                return np.logical_not(v)
            return np.negative(_as(v, _common(_ctype(v), _ctype(v))))
        if kind == "?":
            return self.select(node[1], node[2], node[3])
        op, a = node[1], node[2]
        if op in ("&&", "||"):
            return self.logical(op, a, node[3])
        return self.arith(op, self.value(a), self.value(node[3]))

    def arith(self, op, a, b):
        t = _common(_ctype(a), _ctype(b))
        a, b = _as(a, t), _as(b, t)
        if op in _COMPARE:
            return _COMPARE[op](a, b)
        if op in _ARITH:
            return _ARITH[op](a, b)
        if op == "/":
            return np.divide(a, b) if t.kind == "f" else _truncating_divide(a, b)
        if t.kind == "f":  # "%"
            raise NotImplementedError("% of floating-point values is not C")
        return _c_remainder(a, b)

    def select(self, cond, yes, no):
        """cond ? yes : no, each branch evaluated only where it is taken."""
        c = np.asarray(self.value(cond)).astype(bool)
        if not self.per_element(c):
            return self.value(yes if c else no)
        if yes[0] in ("name", "num") and no[0] in ("name", "num"):  # nothing to fault on
            a, b = self.value(yes), self.value(no)
            t = _common(_ctype(a), _ctype(b))
            return np.where(c, _as(a, t), _as(b, t))
        a = self.restricted(c).value(yes)
        b = self.restricted(~c).value(no)
        out = np.empty(self.n, _common(_ctype(a), _ctype(b)))
        out[c], out[~c] = a, b
        return out

    def logical(self, op, a, b):
        left = np.asarray(self.value(a)).astype(bool)
        need = left if op == "&&" else ~left  # where the right side decides
        if not self.per_element(need):
            return bool(np.asarray(self.value(b)).astype(bool)) if need else bool(left)
        out = left.copy()
        out[need] = np.asarray(self.restricted(need).value(b)).astype(bool)
        return out

    def read(self, name, index):
        if name not in self.raw:
            q = self.lookup(name)
            if isinstance(q, Pointer):
                return q.cells(index, self.n, self.memory).read()
            raise NotImplementedError(f"the CuPy stand-in reads [] of raw parameters only, "
                                      f"not {name}")
        if _ctype(index).kind not in "iu":
            raise NotImplementedError(f"a non-integer index into {name}")
        flat = self.raw[name]
        index = np.asarray(index)
        if index.size and (index.min() < 0 or index.max() >= flat.size):
            raise IndexError(f"kernel read {name}[{index.min()}..{index.max()}] outside its "
                             f"{flat.size} elements (an illegal memory access on a GPU)")
        return flat[index]

    def call(self, name, v):
        t = _ctype(v)
        if name in _CASTS:
            return _as(v, self.t if name == "T" else _TYPES[name])
        if t.kind != "f":
            raise NotImplementedError(f"{name} of a {t} value")
        return {"sqrt": np.sqrt, "exp": np.exp, "erf": _erf}[name](v)


class Pointer:
    """A `T*` local: a device address per element (or one for all), and what it points to."""

    def __init__(self, addresses, dtype):
        self.addresses, self.dtype = addresses, np.dtype(dtype)

    def cells(self, index, n, memory, write=False):
        """The cells self[index] of the elements: `memory(addresses, dtype)` finds them in the
        device's live allocations (and refuses what a GPU would fault on)."""
        if _ctype(index).kind not in "iu":
            raise NotImplementedError("a non-integer index through a pointer")
        offsets = np.asarray(index, np.int64) * self.dtype.itemsize
        addresses = np.asarray(self.addresses, np.uint64).astype(np.int64) + offsets
        return memory(np.broadcast_to(addresses, (n,)), self.dtype, write)
