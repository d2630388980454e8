"""init_process_group's rendezvous: the store, rank and world size an init_method URL
(`env://`, `tcp://host:port`, `file://path`, with `?rank=&world_size=`) names, and the
address of this machine that the other ranks reach."""
import os
import socket
from urllib.parse import parse_qs, urlparse

from .store import FileStore, PrefixStore, TCPStore

__all__ = ["rendezvous", "local_address"]


def _env(name, scheme="env"):
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    return value


def rendezvous(url, rank, world_size, timeout):
    """(store, rank, world_size, host to listen on) for an init_method URL."""
    parsed = urlparse(url)
    query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
    if "rank" in query:
        rank = int(query["rank"])
    if "world_size" in query:
        world_size = int(query["world_size"])
    scheme = parsed.scheme
    if scheme == "env":
        if rank == -1:
            rank = int(_env("RANK"))
        if world_size == -1:
            world_size = int(_env("WORLD_SIZE"))
        host, port = _env("MASTER_ADDR"), int(_env("MASTER_PORT"))
    elif scheme in ("tcp", "file"):
        if rank == -1:
            raise ValueError(f"Error initializing torch.distributed using {scheme}:// "
                             "rendezvous: rank parameter missing")
        if world_size == -1:
            raise ValueError(f"Error initializing torch.distributed using {scheme}:// "
                             "rendezvous: world size parameter missing")
        if scheme == "file":
            path = parsed.path if not parsed.netloc else parsed.netloc + parsed.path
            return FileStore(path, world_size), rank, world_size, "127.0.0.1"
        host, port = parsed.hostname, parsed.port
    else:
        raise RuntimeError(f"No rendezvous handler for {scheme}://")
    if scheme == "env" and os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
        # the launcher serves the store; each restart of the workers keys under its attempt
        store = PrefixStore(f"/worker/attempt_{os.environ.get('TORCHELASTIC_RESTART_COUNT', 0)}",
                            TCPStore(host, port, world_size, False, timeout))
    else:
        store = TCPStore(host, port, world_size, rank == 0, timeout)
    return store, rank, world_size, local_address(host)


def local_address(master):
    """The address of this machine that reaches `master` (loopback for a local master)."""
    try:
        infos = socket.getaddrinfo(master, None, socket.AF_INET)
        ip = infos[0][4][0]
        if ip.startswith("127."):
            return "127.0.0.1"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((ip, 9))  # a datagram socket's connect sends nothing
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"
