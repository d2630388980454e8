"""Key-value stores for rendezvous, as PyTorch's c10d stores: `HashStore` (one process),
`TCPStore` (a server thread in the master process, clients over TCP), `FileStore` (a file
on a shared file system, locked with `fcntl`) and `PrefixStore`. Values are bytes; `add`
keeps a counter as its decimal text, as PyTorch does. Nothing a store reads from a socket or
its file is unpickled (see `_wire`)."""
import datetime
import errno
import logging
import os
import socket
import threading
import time

from . import _wire

__all__ = ["Store", "HashStore", "TCPStore", "FileStore", "PrefixStore", "DistError",
           "DistStoreError", "DistNetworkError", "DistBackendError", "QueueEmptyError",
           "default_store_timeout"]

default_store_timeout = datetime.timedelta(seconds=300)
_log = logging.getLogger("ember.distributed")


class DistError(RuntimeError):
    pass


class DistStoreError(DistError):
    pass


class DistNetworkError(DistError):
    pass


class DistBackendError(DistError):
    """A collective backend failed (a peer went away mid-collective ...)."""


class QueueEmptyError(DistStoreError):
    """A store queue had nothing to pop."""


def _bytes(value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, (list, tuple)):
        return bytes(value)
    raise TypeError(f"incompatible function arguments: value must be str or bytes, got "
                    f"{type(value).__name__}")


def _seconds(timeout):
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)


class _Table:
    """The key-value table behind a HashStore and the TCPStore server: a dict and one
    condition that waiters sleep on."""

    def __init__(self):
        self.data = {}
        self.cond = threading.Condition()

    def call(self, op, *args):
        with self.cond:
            result = getattr(self, "_" + op)(*args)
            self.cond.notify_all()
            return result

    def _set(self, key, value):
        self.data[key] = value

    def _get_now(self, key):
        return self.data[key]

    def _add(self, key, amount):
        value = int(self.data.get(key, b"0")) + amount
        self.data[key] = str(value).encode()
        return value

    def _append(self, key, value):
        self.data[key] = self.data.get(key, b"") + value

    def _check(self, keys):
        return all(k in self.data for k in keys)

    def _delete_key(self, key):
        return self.data.pop(key, None) is not None

    def _num_keys(self):
        return len(self.data)

    def _compare_set(self, key, expected, desired):
        current = self.data.get(key)
        if current is None:
            if expected == b"":
                self.data[key] = desired
                return desired
            return expected
        if current == expected:
            self.data[key] = desired
            return desired
        return current

    def wait(self, keys, seconds):
        """True once every key is present; False after `seconds`."""
        deadline = time.monotonic() + seconds
        with self.cond:
            while not all(k in self.data for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
            return True


class Store:
    """The interface every store shares; subclasses provide `_call(op, *args)` and
    `_wait(keys, seconds)`."""

    def __init__(self, timeout=default_store_timeout):
        self._timeout = timeout

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout

    def set(self, key, value):
        self._call("set", key, _bytes(value))

    def get(self, key):
        self._wait_or_raise([key], _seconds(self._timeout))
        return self._call("get_now", key)

    def add(self, key, amount):
        return self._call("add", key, int(amount))

    def append(self, key, value):
        self._call("append", key, _bytes(value))

    def check(self, keys):
        return self._call("check", list(keys))

    def delete_key(self, key):
        return self._call("delete_key", key)

    def num_keys(self):
        return self._call("num_keys")

    def compare_set(self, key, expected_value, desired_value):
        return self._call("compare_set", key, _bytes(expected_value), _bytes(desired_value))

    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values):
        for k, v in zip(keys, values):
            self.set(k, v)

    def wait(self, keys, timeout=None):
        self._wait_or_raise(list(keys), _seconds(self._timeout if timeout is None else timeout))

    def _wait_or_raise(self, keys, seconds):
        if not self._wait(keys, seconds):
            self._timed_out(keys, seconds)

    def _timed_out(self, keys, seconds):
        raise DistStoreError(f"wait timeout after {round(seconds * 1000)}ms, keys: "
                             + ", ".join("/" + k for k in keys))


class HashStore(Store):
    """A store in this process's memory (threads share it)."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _call(self, op, *args):
        return self._table.call(op, *args)

    def _wait(self, keys, seconds):
        return self._table.wait(keys, seconds)


class PrefixStore(Store):
    """Every key of `store` seen through `prefix/`."""

    def __init__(self, prefix, store):
        super().__init__(store.timeout)
        self._prefix, self.underlying_store = prefix, store

    def _k(self, key):
        return f"{self._prefix}/{key}"

    @property
    def timeout(self):
        return self.underlying_store.timeout

    def set_timeout(self, timeout):
        self.underlying_store.set_timeout(timeout)

    def _call(self, op, *args):
        if op in ("check",):
            return self.underlying_store._call(op, [self._k(k) for k in args[0]])
        if op == "num_keys":
            return self.underlying_store._call(op)
        return self.underlying_store._call(op, self._k(args[0]), *args[1:])

    def _wait(self, keys, seconds):
        return self.underlying_store._wait([self._k(k) for k in keys], seconds)


# ---- TCPStore: framed requests (see _wire: plain values, never pickles) to a server thread --
_MAX_MESSAGE = 1 << 31
# what each request carries: a request of another shape is answered with a TypeError
_REQUESTS = {"set": (str, bytes), "get_now": (str,), "add": (str, int), "append": (str, bytes),
             "check": (list,), "delete_key": (str,), "num_keys": (),
             "compare_set": (str, bytes, bytes), "wait": (list, (int, float))}
# the errors a server may send back, by name; any other name arrives as RuntimeError
_REPLY_ERRORS = {e.__name__: e for e in (KeyError, ValueError, TypeError, RuntimeError,
                                          DistStoreError, QueueEmptyError)}


def _check_request(request):
    if not (isinstance(request, tuple) and len(request) == 2 and request[0] in _REQUESTS
            and isinstance(request[1], tuple)):
        raise _wire.WireError("not a store request")
    op, args = request
    kinds = _REQUESTS[op]
    if len(args) != len(kinds) or not all(isinstance(a, k) and not isinstance(a, bool)
                                          for a, k in zip(args, kinds)):
        raise TypeError(f"bad arguments for the store's {op}: "
                        + ", ".join(type(a).__name__ for a in args))
    if op in ("check", "wait") and not all(isinstance(k, str) for k in args[0]):
        raise TypeError(f"the store's {op} takes a list of str keys")
    return op, args


class _StoreServer:
    def __init__(self, host, port):
        self.table = _Table()
        try:
            self.sock = socket.create_server((host, port), reuse_port=False, backlog=128)
        except OSError as e:  # (most often: MASTER_PORT is taken)
            name = errno.errorcode.get(e.errno, "UNKNOWN")
            raise DistNetworkError(
                f"The server socket has failed to listen on any local network address. port: "
                f"{port}, useIpv6: false, code: {-(e.errno or 0)}, name: {name}, message: "
                f"{os.strerror(e.errno).lower() if e.errno else e}") from None
        self.port = self.sock.getsockname()[1]
        self._closed = False
        self._conns = set()  # the clients' connections, closed with the server
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self._closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        self._conns.add(conn)
        try:
            with conn:
                self._answer(conn)
        finally:
            self._conns.discard(conn)

    def _answer(self, conn):
        """Reply to `conn`'s requests until it closes or sends what is not a request."""
        while True:
            try:
                request = _wire.recv_frame(conn, _MAX_MESSAGE, DistNetworkError)
                op, args = _check_request(request)
                if op == "wait":
                    reply = ("ok", self.table.wait(*args))
                else:
                    reply = ("ok", self.table.call(op, *args))
            except (DistNetworkError, OSError):
                return
            except _wire.WireError as e:  # not one of our clients: drop it, serve the rest
                _log.warning("TCPStore: closing a connection from %s that sent a malformed "
                             "request (%s)", _peer_name(conn), e)
                return
            except Exception as e:  # the client raises it
                reply = ("error", type(e).__name__, str(e.args[0]) if e.args else "")
            try:
                data = _wire.frame(reply)
            except _wire.WireError as e:  # e.g. a counter past 64 bits
                data = _wire.frame(("error", "RuntimeError", str(e)))
            try:
                conn.sendall(data)
            except OSError:
                return

    def close(self):
        self._closed = True
        try:  # (wakes the accepting thread: a plain close leaves the port listening)
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        for conn in list(self._conns):  # (a client still waiting hears at once)
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class TCPStore(Store):
    """A store served over TCP by the master (`is_master=True`) and reached by every process
    at `host_name:port`. `port=0` on the master picks a free port (read it from `.port`)."""

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=default_store_timeout, wait_for_workers=True, multi_tenant=False,
                 master_listen_fd=None, use_libuv=True):
        super().__init__(timeout)
        self.host, self.world_size = host_name, world_size
        self._server = _StoreServer(host_name, port) if is_master else None
        self.port = self._server.port if is_master else port
        self._lock = threading.Lock()
        self._sock = self._connect(_seconds(timeout))
        self._call("add", "__tcpstore_workers", 1)
        if is_master and wait_for_workers and world_size is not None:
            deadline = time.monotonic() + _seconds(timeout)
            while True:
                joined = int(self._call("get_now", "__tcpstore_workers"))
                if joined >= world_size:
                    break
                if time.monotonic() > deadline:
                    raise DistStoreError(f"Timed out after {round(_seconds(timeout))} seconds "
                                         f"waiting for clients. {joined}/{world_size} clients "
                                         "joined.")
                time.sleep(0.005)

    def _connect(self, seconds):
        deadline = time.monotonic() + seconds
        while True:
            try:
                sock = socket.create_connection((self.host, self.port),
                                                timeout=max(deadline - time.monotonic(), 0.01))
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError:
                if time.monotonic() > deadline:
                    raise DistNetworkError(
                        f"The client socket has timed out after {round(seconds * 1000)}ms "
                        f"while trying to connect to ({self.host}, {self.port}).") from None
                time.sleep(0.01)

    def _request(self, op, *args):
        with self._lock:
            self._sock.sendall(_wire.frame((op, args)))
            reply = _wire.recv_frame(self._sock, _MAX_MESSAGE, DistNetworkError)
        if reply[0] == "error":
            raise _REPLY_ERRORS.get(reply[1], RuntimeError)(reply[2])
        return reply[1]

    def _call(self, op, *args):
        return self._request(op, *args)

    def _wait(self, keys, seconds):
        return self._request("wait", keys, seconds)

    def num_keys(self):
        return self._call("num_keys") - 1  # the worker counter is ours, not the user's

    @property
    def libuvBackend(self):
        return False

    def _release(self):
        """Close the connection, and the server where this store serves: its port is free
        for the next store (destroy_process_group and init_process_group again)."""
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()
        if getattr(self, "_server", None) is not None:
            self._server.close()

    __del__ = _release


class FileStore(Store):
    """A store kept in one file that every process opens; the last store object to go
    away deletes the file, as PyTorch's does."""

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path, self.world_size = file_name, world_size
        self._closed = False
        self._call("add", "__filestore_users", 1)

    def _call(self, op, *args):
        import fcntl
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(os.dup(fd), "rb") as f:
                raw = f.read()
            table = _Table()
            table.data = _file_table(raw, self.path) if raw else {}
            result = getattr(table, "_" + op)(*args)
            if op not in _READ_ONLY:
                data = _wire.encode([[k, v] for k, v in table.data.items()])
                os.lseek(fd, 0, os.SEEK_SET)
                os.ftruncate(fd, 0)
                os.write(fd, data)
            return result
        finally:
            os.close(fd)

    def _wait(self, keys, seconds):
        deadline = time.monotonic() + seconds
        while not self._call("check", keys):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    def _timed_out(self, keys, seconds):
        raise RuntimeError(f"Timeout waiting for key: {', '.join(keys)} after "
                           f"{round(seconds * 1000)} ms")

    def num_keys(self):
        return self._call("num_keys") - 1

    def __del__(self):
        if getattr(self, "_closed", True):
            return
        self._closed = True
        try:
            if self._call("add", "__filestore_users", -1) <= 0:
                os.remove(self.path)
        except OSError:
            pass


_READ_ONLY = ("get_now", "check", "num_keys")


def _file_table(raw, path):
    """The key-value table a FileStore's file holds; DistStoreError if it holds anything else."""
    try:
        pairs = _wire.decode(raw)
        if isinstance(pairs, list) and all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                and isinstance(p[1], bytes) for p in pairs):
            return dict(pairs)
        problem = "not a list of (str key, bytes value) pairs"
    except _wire.WireError as e:
        problem = str(e)
    raise DistStoreError(f"FileStore: {path} is not a store file ({problem})")


def _peer_name(conn):
    try:
        return "%s:%s" % conn.getpeername()[:2]
    except OSError:
        return "an unknown peer"
