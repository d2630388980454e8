"""What ember's store and mesh read from a socket or a store file: plain values only, never a
pickle; a malformed or hostile message is turned away without running code, allocating what
it claims or stopping the service for everyone else."""
import datetime
import logging
import os
import pickle
import socket
import struct
import threading

import numpy as np
import pytest

import ember.distributed as dist
from ember.distributed import _wire
from ember.distributed._transport import Mesh
from ember.distributed.gloo import _array, _payload


@pytest.mark.parametrize("value", [
    None, True, False, 0, -1, (1 << 63) - 1, -(1 << 63), 1.5, float("inf"), "", "clé/✓",
    b"", b"\x00\xff" * 3, [], (), ["a", b"b", [1, (2.0, None)]], ("p2p", 3, 7),
])
def test_values_round_trip(value):
    out = _wire.decode(_wire.encode(value))
    assert out == value and type(out) is type(value)


@pytest.mark.parametrize("value", [1 << 63, object(), {"a": 1}, {1, 2}, np.float32(1)])
def test_other_values_are_refused_when_sent(value):
    with pytest.raises(_wire.WireError):
        _wire.encode(value)


@pytest.mark.parametrize("data", [
    b"", b"x", b"i\x00", b"s" + struct.pack("!Q", 1 << 60) + b"abc",
    b"b" + struct.pack("!Q", 10) + b"short", b"l" + struct.pack("!I", 1 << 30) + b"N",
    b"NN", b"s" + struct.pack("!Q", 2) + b"\xff\xfe", b"l\x00\x00\x00\x01" * 40 + b"N",
    pickle.dumps(("set", ("k", b"v"))),
])
def test_malformed_bytes_raise_wire_error(data):
    with pytest.raises(_wire.WireError):
        _wire.decode(data)


class _Evil:
    def __reduce__(self):
        return (open, (_MARKER[0], "w"))


_MARKER = [None]


@pytest.fixture
def store():
    master = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=5))
    yield master
    del master


def _raw_client(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    return sock


def test_store_server_never_unpickles_and_keeps_serving(store, tmp_path, caplog):
    _MARKER[0] = str(tmp_path / "ran")
    evil = pickle.dumps(("set", (_Evil(), b"v")))
    with caplog.at_level(logging.WARNING, logger="ember.distributed"):
        sock = _raw_client(store.port)
        sock.sendall(struct.pack("!Q", len(evil)) + evil)
        assert sock.recv(1) == b""  # the server closed this connection without a reply
        sock.close()
    assert not os.path.exists(_MARKER[0])
    assert "malformed request" in caplog.text
    store.set("after", "still serving")
    assert store.get("after") == b"still serving"


def test_store_server_does_not_allocate_a_claimed_length(store):
    sock = _raw_client(store.port)
    sock.sendall(struct.pack("!Q", 1 << 40))  # a terabyte claimed, a few bytes sent
    assert sock.recv(1) == b""
    sock = _raw_client(store.port)
    sock.sendall(struct.pack("!Q", 1 << 30) + b"s")  # under the limit: it waits for more
    sock.close()
    store.set("k", b"v")
    assert store.get("k") == b"v"


@pytest.mark.parametrize("request_", [
    ("set", ("k",)), ("set", (1, b"v")), ("add", ("k", True)), ("check", (["a", 1],)),
    ("wait", (["a"], "soon")),
])
def test_bad_arguments_get_a_type_error_reply(store, request_):
    sock = _raw_client(store.port)
    sock.sendall(_wire.frame(request_))
    reply = _wire.recv_frame(sock, 1 << 20)
    assert reply[0] == "error" and reply[1] == "TypeError"
    sock.close()
    assert store.add("counter", 2) == 2


@pytest.mark.parametrize("request_", [("nope", ()), "set", ("set", ["k", b"v"]), 7])
def test_what_is_not_a_request_drops_the_connection(store, request_):
    sock = _raw_client(store.port)
    sock.sendall(_wire.frame(request_))
    assert sock.recv(1) == b""
    sock.close()
    assert store.add("counter", 2) == 2


def test_server_errors_keep_their_type(store):
    store.set("text", "abc")
    with pytest.raises(ValueError):
        store.add("text", 1)


def test_file_store_reads_no_pickle(tmp_path):
    path = tmp_path / "store"
    s = dist.FileStore(str(path), 1)
    s.set("k", "v")
    assert s.get("k") == b"v" and s.add("n", 3) == 3
    _MARKER[0] = str(tmp_path / "ran")
    path.write_bytes(pickle.dumps({"k": _Evil()}))
    with pytest.raises(dist.DistStoreError, match="is not a store file"):
        s.get("k")
    assert not os.path.exists(_MARKER[0])
    path.write_bytes(b"")
    del s


def test_array_headers_are_checked():
    meta, payload = _payload(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert meta == ("float32", (2, 3))
    np.testing.assert_array_equal(_array(meta, bytes(payload)), np.arange(6).reshape(2, 3))
    for bad in [("float32", (2, 4)), ("float32", (-2, -3)), ("object", (6,)), ("np", (6,)),
                ("__class__", (6,)), (1, (6,)), ("float32",), ("float32", [2, 3])]:
        with pytest.raises(dist.DistBackendError, match="does not describe"):
            _array(bad, bytes(payload))


def test_mesh_turns_away_strangers(caplog):
    store = dist.HashStore()
    meshes = [None, None]

    def rank(r):
        meshes[r] = Mesh(store, r, 2, 10.0, "127.0.0.1")

    t0 = threading.Thread(target=rank, args=(0,))
    t0.start()
    store.wait(["mesh/0"])
    host, port, _ = store.get("mesh/0").decode().rsplit(":", 2)
    with caplog.at_level(logging.WARNING, logger="ember.distributed"):
        stranger = socket.create_connection((host, int(port)))
        stranger.sendall(struct.pack("!Q16s", 1, b"\x00" * 16))  # rank 1, a guessed token
        assert stranger.recv(1) == b""
        stranger.close()
        rank(1)
        t0.join()
    assert "turned away" in caplog.text
    meshes[1].send(0, ("k",), "obj", b"payload")
    assert meshes[0].recv(1, ("k",)) == (1, "obj", bytearray(b"payload"))
    for m in meshes:
        m.close()
