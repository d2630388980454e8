"""Bytes on ember's sockets and in its store files: a tagged encoding of plain values (None,
bool, int, float, str, bytes and tuples/lists of them) and nothing else. Unlike pickle, no
message a peer or a stranger sends can build an object or run code; a malformed one raises
`WireError`, and every length it claims is checked against the bytes that actually came.
The TCP store's requests and replies, the file store's table and the mesh's message
headers all use it."""
import struct

__all__ = ["WireError", "encode", "decode", "recv_exact", "recv_frame", "frame"]

_I64, _F64, _U32, _U64 = struct.Struct("!q"), struct.Struct("!d"), struct.Struct("!I"), \
    struct.Struct("!Q")
_MAX_DEPTH = 16
_CHUNK = 1 << 22  # the first buffer for a message; it grows as bytes arrive


class WireError(ValueError):
    """Bytes that are not a well-formed message."""


def encode(value):
    out = bytearray()
    _put(out, value, 0)
    return bytes(out)


def _put(out, v, depth):
    if depth > _MAX_DEPTH:
        raise WireError(f"value nested deeper than {_MAX_DEPTH} levels")
    if v is None:
        out += b"N"
    elif v is True or v is False:
        out += b"T" if v else b"F"
    elif isinstance(v, int):
        if not -(1 << 63) <= v < (1 << 63):
            raise WireError(f"integer {v} does not fit in 64 bits")
        out += b"i" + _I64.pack(v)
    elif isinstance(v, float):
        out += b"f" + _F64.pack(v)
    elif isinstance(v, str):
        data = v.encode("utf-8", "surrogatepass")
        out += b"s" + _U64.pack(len(data)) + data
    elif isinstance(v, (bytes, bytearray, memoryview)):
        data = bytes(v)
        out += b"b" + _U64.pack(len(data)) + data
    elif isinstance(v, (tuple, list)):
        out += (b"t" if isinstance(v, tuple) else b"l") + _U32.pack(len(v))
        for item in v:
            _put(out, item, depth + 1)
    else:
        raise WireError(f"cannot send a value of type {type(v).__name__}")


def decode(data):
    """The one value `data` holds; WireError if it is anything but exactly one value."""
    view = memoryview(data)
    value, end = _get(view, 0, 0)
    if end != len(view):
        raise WireError(f"{len(view) - end} bytes left over after the value")
    return value


def _take(view, pos, n):
    if n > len(view) - pos:
        raise WireError(f"a field claims {n} bytes where {len(view) - pos} are left")
    return view[pos:pos + n], pos + n


def _get(view, pos, depth):
    if depth > _MAX_DEPTH:
        raise WireError(f"value nested deeper than {_MAX_DEPTH} levels")
    tag, pos = _take(view, pos, 1)
    tag = bytes(tag)
    if tag == b"N":
        return None, pos
    if tag in (b"T", b"F"):
        return tag == b"T", pos
    if tag == b"i":
        raw, pos = _take(view, pos, 8)
        return _I64.unpack(raw)[0], pos
    if tag == b"f":
        raw, pos = _take(view, pos, 8)
        return _F64.unpack(raw)[0], pos
    if tag in (b"s", b"b"):
        raw, pos = _take(view, pos, 8)
        data, pos = _take(view, pos, _U64.unpack(raw)[0])
        if tag == b"b":
            return bytes(data), pos
        try:
            return str(data, "utf-8", "surrogatepass"), pos
        except UnicodeDecodeError as e:
            raise WireError(f"a string is not UTF-8: {e}") from None
    if tag in (b"t", b"l"):
        raw, pos = _take(view, pos, 4)
        n = _U32.unpack(raw)[0]
        if n > len(view) - pos:  # every item takes at least its tag byte
            raise WireError(f"a sequence claims {n} items where {len(view) - pos} bytes are left")
        items = []
        for _ in range(n):
            item, pos = _get(view, pos, depth + 1)
            items.append(item)
        return (tuple(items) if tag == b"t" else items), pos
    raise WireError(f"unknown tag {tag!r}")


def recv_exact(sock, n, closed_error=ConnectionError, trusted=False):
    """Exactly `n` bytes from `sock`. The buffer doubles only as bytes arrive, so a length
    that a peer claims but never sends costs no memory; a `trusted` peer's (one that proved
    itself) is allocated at once. `closed_error(message)` is raised when the peer closes
    first."""
    buf, got = bytearray(n if trusted else min(n, _CHUNK)), 0
    while got < n:
        if got == len(buf):
            buf += bytes(min(n - got, len(buf)))
        k = sock.recv_into(memoryview(buf)[got:])  # (the temporary view is gone before +=)
        if k == 0:
            raise closed_error("Failed to recv, got 0 bytes. Connection was likely closed. "
                               "Did the remote server shutdown or crash?")
        got += k
    return buf


def recv_into_exact(sock, view, closed_error=ConnectionError):
    """Fill the writable byte memoryview `view` from `sock`; returns `view`."""
    got, n = 0, view.nbytes
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise closed_error("Failed to recv, got 0 bytes. Connection was likely closed. "
                               "Did the remote server shutdown or crash?")
        got += k
    return view


def frame(value):
    """`value` encoded, behind its 8-byte length."""
    data = encode(value)
    return _U64.pack(len(data)) + data


def recv_frame(sock, max_bytes, closed_error=ConnectionError):
    """The value of the next frame on `sock`; WireError if it claims more than `max_bytes`."""
    (n,) = _U64.unpack(recv_exact(sock, _U64.size, closed_error))
    if n > max_bytes:
        raise WireError(f"a message claims {n} bytes, more than the limit of {max_bytes}")
    return decode(recv_exact(sock, n, closed_error))
