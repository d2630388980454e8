"""The wire under the "gloo" backend: a full mesh of TCP connections between the ranks of
a job, found through the rendezvous store. A reader thread per peer files every incoming
message under (sender, key) so that a rank can send to a peer that is itself sending
(no deadlock on full socket buffers) and messages can arrive before they are asked for.
Messages are a (key, meta) header in `_wire`'s encoding (never a pickle) and a raw byte
payload (an array's memory). A connection must open with its rank and the token the
listening rank published in the store, so a stranger reaching the port is turned away."""
import collections
import hmac
import logging
import os
import socket
import struct
import threading
import time

from . import _wire
from .store import DistBackendError, DistNetworkError

__all__ = ["Mailbox", "Mesh", "FAILED"]

# The key of a note a rank sends the rest of its group when one of its collectives raised:
# (FAILED, group id, name, seq) with the error as its meta. A rank waiting in that collective
# for a message from it raises at once instead of waiting out the timeout.
FAILED = "collective failed"


def _collective(key):
    """(group id, seq) of a collective's message key (group id, name, seq, ...); None for
    a point-to-point key."""
    if isinstance(key, tuple) and len(key) >= 3 and type(key[0]) is int \
            and type(key[2]) is int:
        return key[0], key[2]
    return None

_PAYLOAD_LEN = struct.Struct("!Q")
_HELLO = struct.Struct("!Q16s")  # the connecting rank, the listener's token
_MAX_HEADER = 1 << 16
_SOCKET_BUFFER = 4 << 20
_log = logging.getLogger("ember.distributed")


class Mailbox:
    """Messages that arrived, filed by (sender, key), and the wait for one."""

    def __init__(self, rank, size, timeout):
        self.rank, self.size, self.timeout = rank, size, timeout
        self._cond = threading.Condition()
        self._mailbox = collections.defaultdict(collections.deque)
        self._closed_peers = set()
        self._posted = {}  # (peer, key) -> a writable byte view the payload may land in
        self._failed = {}  # (peer, (group id, seq)) -> why that rank gave up that collective

    def post(self, peer, key, into):
        """Offer `into` (a writable, contiguous byte memoryview) as the place for the next
        payload from `peer` under `key`: if it has not arrived yet and is exactly that long,
        it is read straight into `into`, saving an allocation and a copy. `recv` still
        returns the message either way; its payload is `into` when it landed there."""
        with self._cond:
            self._posted[(peer, key)] = into

    def _claim(self, peer, key, nbytes):
        """The posted buffer for this message, when one of exactly `nbytes` waits."""
        with self._cond:
            into = self._posted.pop((peer, key), None)
        return into if into is not None and into.nbytes == nbytes else None

    def _file(self, peer, key, meta, payload):
        with self._cond:
            if isinstance(key, tuple) and key[:1] == (FAILED,) and isinstance(meta, str) \
                    and _collective(key[1:]) is not None:  # (a peer's note, not a message)
                self._failed[(peer, _collective(key[1:]))] = meta
            else:
                self._mailbox[(peer, key)].append((meta, payload))
            self._cond.notify_all()

    def _lost(self, peer):
        with self._cond:
            self._closed_peers.add(peer)
            self._cond.notify_all()

    def _check_peer(self, peer, key):
        """Raise if `peer` gave up the collective `key` belongs to, or runs another
        collective at its seq (holding the lock, with no message for `key` from it)."""
        cid = _collective(key)
        if (peer, cid) in self._failed:
            raise DistBackendError(f"[gloo] Rank {peer} failed this collective, so it cannot "
                                   f"complete here either. Rank {peer}: "
                                   f"{self._failed[(peer, cid)]}")
        for sender, other in self._mailbox:
            if sender != peer or _collective(other) != cid:
                continue
            if other[1] != key[1]:
                raise RuntimeError(
                    f"[gloo] Rank {peer} runs {other[1]} where this rank runs {key[1]} (the "
                    f"group's collective number {cid[1]}). Is there a distributed collective "
                    "mismatch in your code? Every rank must call the same collectives, in the "
                    "same order.")
            if (len(other) > 3) != (len(key) > 3):  # one whole-tensor message, one ring step
                raise RuntimeError(
                    f"[gloo] Rank {peer} runs {key[1]} on a tensor of another size than this "
                    "rank's (one goes round the ring, the other is sent whole). Is there a "
                    "distributed collective mismatch in your code? Every rank must pass "
                    "tensors of the same size and dtype.")

    def recv(self, peer, key, timeout=None):
        """The next message from `peer` under `key` (from any peer when `peer` is None):
        (sender, meta, payload)."""
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        peers = range(self.size) if peer is None else (peer,)
        with self._cond:
            while True:
                for p in peers:
                    box = self._mailbox.get((p, key))
                    if box:
                        meta, payload = box.popleft()
                        if not box:
                            del self._mailbox[(p, key)]
                        self._posted.pop((p, key), None)
                        return p, meta, payload
                if peer is not None and _collective(key) is not None:
                    self._check_peer(peer, key)
                dead = [p for p in peers if p in self._closed_peers]
                if dead and (peer is not None or len(dead) == len(peers) - 1):
                    raise DistNetworkError(f"[gloo] Connection closed by peer [rank {dead[0]}]")
                left = deadline - time.monotonic()
                if left <= 0:
                    for p in peers:  # (a late payload must not land in the caller's memory)
                        self._posted.pop((p, key), None)
                    raise RuntimeError(f"[gloo] Timed out waiting {round(timeout * 1000)}ms "
                                       "for recv operation to complete")
                self._cond.wait(left)


class Mesh(Mailbox):
    """The ranks of a job connected pairwise over TCP."""

    def __init__(self, store, rank, size, timeout, host):
        super().__init__(rank, size, timeout)
        self._socks, self._send_locks = {}, {}
        self._shutting_down = False
        listener = socket.create_server((host, 0), backlog=max(size, 8))
        token = os.urandom(16)
        try:
            store.set(f"mesh/{rank}", f"{host}:{listener.getsockname()[1]}:{token.hex()}")
            for peer in range(rank):  # connect down, accept from above
                h, p, peer_token = store.get(f"mesh/{peer}").decode().rsplit(":", 2)
                sock = socket.create_connection((h, int(p)), timeout=timeout)
                sock.sendall(_HELLO.pack(rank, bytes.fromhex(peer_token)))
                self._add(peer, sock)
            self._accept_peers(listener, token, timeout)
        finally:
            listener.close()

    def _accept_peers(self, listener, token, timeout):
        """Every rank above ours, each proving with `token` that it read our address from
        the store; any other connection is logged and closed."""
        deadline = time.monotonic() + timeout
        waiting = set(range(self.rank + 1, self.size))
        while waiting:
            listener.settimeout(max(deadline - time.monotonic(), 0.001))
            try:
                sock, addr = listener.accept()
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                peer, their_token = _HELLO.unpack(_wire.recv_exact(sock, _HELLO.size))
            except socket.timeout:
                raise RuntimeError(f"[gloo] Timed out after {round(timeout * 1000)}ms "
                                   "waiting for the other ranks to connect") from None
            except (OSError, ConnectionError) as e:
                _log.warning("[gloo] rank %d: a connection failed its handshake (%s)",
                             self.rank, e)
                continue
            if peer in waiting and hmac.compare_digest(their_token, token):
                waiting.discard(peer)
                self._add(peer, sock)
            else:
                _log.warning("[gloo] rank %d: turned away a connection from %s that did not "
                             "present this job's token for a rank still expected", self.rank,
                             addr)
                sock.close()

    def _add(self, peer, sock):
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for buf in (socket.SO_SNDBUF, socket.SO_RCVBUF):  # fewer, larger system calls
            sock.setsockopt(socket.SOL_SOCKET, buf, _SOCKET_BUFFER)
        self._socks[peer] = sock
        self._send_locks[peer] = threading.Lock()
        threading.Thread(target=self._read, args=(peer, sock), daemon=True).start()

    def _read(self, peer, sock):
        try:
            while True:
                head = _wire.recv_frame(sock, _MAX_HEADER)
                if not (isinstance(head, tuple) and len(head) == 3
                        and isinstance(head[2], int) and head[2] >= 0):
                    raise _wire.WireError("not a message header")
                key, meta, plen = head
                into = self._claim(peer, key, plen) if plen else None
                if into is not None:
                    payload = _wire.recv_into_exact(sock, into)
                else:
                    payload = _wire.recv_exact(sock, plen, trusted=True) if plen else bytearray()
                self._file(peer, key, meta, payload)
        except (OSError, ConnectionError):
            self._lost(peer)
        except _wire.WireError as e:
            _log.error("[gloo] rank %d: rank %d sent a malformed message (%s); dropping the "
                       "connection", self.rank, peer, e)
            sock.close()
            self._lost(peer)

    def send(self, peer, key, meta, payload=b""):
        size = payload.nbytes if isinstance(payload, memoryview) else len(payload)
        head = _wire.frame((key, meta, size))
        with self._send_locks[peer]:
            try:
                sock = self._socks[peer]
                sock.sendall(head)
                if size:
                    sock.sendall(payload)
            except OSError as e:
                raise DistNetworkError(f"[gloo] Connection to rank {peer} failed: {e}") from None

    def close(self):
        for sock in self._socks.values():
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        self._socks.clear()
