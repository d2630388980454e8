"""The wire under the "gloo" backend: a full mesh of TCP connections between the ranks of
a job, found through the rendezvous store. A reader thread per peer files every incoming
message under (sender, key) so that a rank can send to a peer that is itself sending
(no deadlock on full socket buffers) and messages can arrive before they are asked for.
Messages are a pickled (key, meta) header and a raw byte payload (an array's memory)."""
import collections
import pickle
import socket
import struct
import threading
import time

from .store import DistNetworkError

__all__ = ["Mailbox", "Mesh", "MpiMesh"]

_HEAD = struct.Struct("!QQ")


def _recv_exact(sock, n):
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:], min(n - got, 1 << 22))
        if k == 0:
            raise ConnectionError("peer closed")
        got += k
    return buf


class Mailbox:
    """Messages that arrived, filed by (sender, key), and the wait for one."""

    def __init__(self, rank, size, timeout):
        self.rank, self.size, self.timeout = rank, size, timeout
        self._cond = threading.Condition()
        self._mailbox = collections.defaultdict(collections.deque)
        self._closed_peers = set()

    def _file(self, peer, key, meta, payload):
        with self._cond:
            self._mailbox[(peer, key)].append((meta, payload))
            self._cond.notify_all()

    def _lost(self, peer):
        with self._cond:
            self._closed_peers.add(peer)
            self._cond.notify_all()

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
                        return p, meta, payload
                dead = [p for p in peers if p in self._closed_peers]
                if dead and (peer is not None or len(dead) == len(peers) - 1):
                    raise DistNetworkError(f"[gloo] Connection closed by peer [rank {dead[0]}]")
                left = deadline - time.monotonic()
                if left <= 0:
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
        try:
            store.set(f"mesh/{rank}", f"{host}:{listener.getsockname()[1]}")
            for peer in range(rank):  # connect down, accept from above
                addr = store.get(f"mesh/{peer}").decode()
                h, p = addr.rsplit(":", 1)
                sock = socket.create_connection((h, int(p)), timeout=timeout)
                sock.sendall(struct.pack("!Q", rank))
                self._add(peer, sock)
            listener.settimeout(timeout)
            for _ in range(rank + 1, size):
                try:
                    sock, _ = listener.accept()
                except socket.timeout:
                    raise RuntimeError(f"[gloo] Timed out after {round(timeout * 1000)}ms "
                                       "waiting for the other ranks to connect") from None
                sock.settimeout(timeout)
                (peer,) = struct.unpack("!Q", _recv_exact(sock, 8))
                self._add(peer, sock)
        finally:
            listener.close()

    def _add(self, peer, sock):
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socks[peer] = sock
        self._send_locks[peer] = threading.Lock()
        threading.Thread(target=self._read, args=(peer, sock), daemon=True).start()

    def _read(self, peer, sock):
        try:
            while True:
                hlen, plen = _HEAD.unpack(_recv_exact(sock, _HEAD.size))
                key, meta = pickle.loads(_recv_exact(sock, hlen))
                payload = _recv_exact(sock, plen) if plen else bytearray()
                self._file(peer, key, meta, payload)
        except (OSError, ConnectionError, EOFError):
            self._lost(peer)

    def send(self, peer, key, meta, payload=b""):
        head = pickle.dumps((key, meta), protocol=pickle.HIGHEST_PROTOCOL)
        size = payload.nbytes if isinstance(payload, memoryview) else len(payload)
        with self._send_locks[peer]:
            try:
                sock = self._socks[peer]
                sock.sendall(_HEAD.pack(len(head), size) + head)
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


_MPI_TAG = 0x656d62  # one tag for all of ember's messages; keys tell them apart


class MpiMesh(Mailbox):
    """The ranks of an MPI job (mpi4py's COMM_WORLD, duplicated), with the same interface
    as `Mesh`: a reader thread receives every message and files it, which needs an MPI
    library initialised with MPI_THREAD_MULTIPLE (mpi4py's default)."""

    def __init__(self, timeout):
        from mpi4py import MPI
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            raise RuntimeError("The MPI backend needs an MPI library initialised with "
                               "MPI_THREAD_MULTIPLE")
        self._MPI, self.comm = MPI, MPI.COMM_WORLD.Dup()
        super().__init__(self.comm.Get_rank(), self.comm.Get_size(), timeout)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        import atexit
        atexit.register(self.close)  # before mpi4py finalizes MPI, with no receive pending

    def _read(self):
        while True:
            status = self._MPI.Status()
            message = self.comm.recv(source=self._MPI.ANY_SOURCE, tag=_MPI_TAG, status=status)
            if message is None:  # our own close()
                return
            key, meta, payload = message
            self._file(status.Get_source(), key, meta, payload)

    def send(self, peer, key, meta, payload=b""):
        self.comm.send((key, meta, bytes(payload)), dest=peer, tag=_MPI_TAG)

    def close(self):
        if self._reader is None:
            return
        self.comm.send(None, dest=self.rank, tag=_MPI_TAG)
        self._reader.join()
        self._reader = None
        self.comm.Free()
