"""ember.hub: the cache directory rules, checkpoints loaded from the hub cache (PyTorch's own
files included), a quick clear failure when a download cannot connect, and hubconf.py
entrypoints from a local directory or a cached GitHub repository."""
import collections
import os
import pickle
import time
import zipfile
from urllib.error import URLError

import numpy as np

import pytest

import ember


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    ember.hub.set_dir(str(tmp_path / "hub"))
    return tmp_path / "hub"


def test_get_dir_follows_torch_home_and_xdg(monkeypatch, tmp_path):
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ember.hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert ember.hub.get_dir() == str(tmp_path / "th" / "hub")
    ember.hub.set_dir("~/somewhere")
    assert ember.hub.get_dir() == os.path.expanduser("~/somewhere")


def test_get_dir_matches_torch(torch, monkeypatch, tmp_path):
    import torch.hub
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    for env in ({}, {"TORCH_HOME": str(tmp_path / "a")}, {"XDG_CACHE_HOME": str(tmp_path)}):
        monkeypatch.delenv("TORCH_HOME", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert ember.hub.get_dir() == torch.hub.get_dir()


def test_state_dict_from_the_cache_written_by_torch(torch, hub_dir, capsys):
    checkpoints = hub_dir / "checkpoints"
    checkpoints.mkdir(parents=True)
    weights = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.tensor([1, 2])}
    torch.save(weights, checkpoints / "tiny-0a1b2c.pth")
    sd = ember.hub.load_state_dict_from_url("https://example.invalid/models/tiny-0a1b2c.pth")
    assert sorted(sd) == ["b", "w"]
    np.testing.assert_array_equal(sd["w"].numpy(), np.arange(6.0).reshape(2, 3))
    assert sd["b"].dtype == ember.int64
    assert capsys.readouterr().out == ""  # cached: nothing to download


def test_file_name_model_dir_and_legacy_zip(hub_dir, tmp_path):
    own = tmp_path / "own"
    own.mkdir()
    ember.save({"x": ember.ones(2)}, str(own / "named.pt"))
    sd = ember.hub.load_state_dict_from_url("https://example.invalid/a/b?c=d",
                                            model_dir=str(own), file_name="named.pt")
    assert sd["x"].tolist() == [1.0, 1.0]
    # the old format: a zip holding the one checkpoint file
    ember.save({"y": ember.zeros(3)}, str(tmp_path / "inner.pt"))
    checkpoints = hub_dir / "checkpoints"
    checkpoints.mkdir(parents=True)
    with zipfile.ZipFile(checkpoints / "legacy.zip", "w") as zf:
        zf.write(tmp_path / "inner.pt", "inner.pt")
    sd = ember.hub.load_state_dict_from_url("https://example.invalid/legacy.zip")
    assert sd["y"].tolist() == [0.0, 0.0, 0.0]


def test_state_dict_from_url_is_weights_only_unless_asked(hub_dir):
    """PyTorch's default (weights_only=False) would let a downloaded file run code; ember
    loads weights only unless the caller passes weights_only=False."""
    checkpoints = hub_dir / "checkpoints"
    checkpoints.mkdir(parents=True)
    ember.save({"n": collections.deque([1])}, str(checkpoints / "model.pt"))  # not allowed
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ember.hub.load_state_dict_from_url("https://example.invalid/model.pt")
    sd = ember.hub.load_state_dict_from_url("https://example.invalid/model.pt",
                                            weights_only=False)
    assert sd["n"] == collections.deque([1])


def test_missing_file_fails_fast_with_a_clear_error(hub_dir, monkeypatch, capsys):
    monkeypatch.setattr(ember.hub, "DOWNLOAD_TIMEOUT", 3.0)
    start = time.monotonic()
    with pytest.raises(URLError) as info:
        ember.hub.load_state_dict_from_url("http://nonexistent.invalid/m/model-abc.pth")
    assert time.monotonic() - start < 10
    notes = "".join(getattr(info.value, "__notes__", []))
    assert str(hub_dir / "checkpoints" / "model-abc.pth") in notes
    out = capsys.readouterr().out
    assert out == ('Downloading: "http://nonexistent.invalid/m/model-abc.pth" to '
                   f'{hub_dir / "checkpoints" / "model-abc.pth"}\n')
    assert os.listdir(hub_dir / "checkpoints") == []  # no partial file left behind


def test_a_connection_that_never_answers_times_out(monkeypatch, tmp_path):
    import socket
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)  # accepts the connection, never replies
    monkeypatch.setattr(ember.hub, "DOWNLOAD_TIMEOUT", 1.0)
    start = time.monotonic()
    try:
        with pytest.raises((URLError, OSError)):
            ember.hub.download_url_to_file(f"http://127.0.0.1:{server.getsockname()[1]}/f",
                                           str(tmp_path / "f"), progress=False)
    finally:
        server.close()
    assert time.monotonic() - start < 6
    assert os.listdir(tmp_path) == []


def test_download_from_a_local_server_with_hash_check(tmp_path):
    import functools
    import hashlib
    import http.server
    import threading
    (tmp_path / "srv").mkdir()
    payload = b"ember" * 1000
    (tmp_path / "srv" / "blob.bin").write_bytes(payload)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(tmp_path / "srv"))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/blob.bin"
        digest = hashlib.sha256(payload).hexdigest()
        ember.hub.download_url_to_file(url, str(tmp_path / "out.bin"), digest[:8],
                                       progress=False)
        assert (tmp_path / "out.bin").read_bytes() == payload
        with pytest.raises(RuntimeError, match=f'invalid hash value \\(expected "ffff", got '
                                               f'"{digest}"\\)'):
            ember.hub.download_url_to_file(url, str(tmp_path / "bad.bin"), "ffff",
                                           progress=False)
        assert not (tmp_path / "bad.bin").exists()
    finally:
        server.shutdown()


HUBCONF = '''
dependencies = ["numpy"]
import ember

def tiny(width=2, scale=1.0):
    """A Linear layer of the given width."""
    m = ember.nn.Linear(width, width)
    with ember.no_grad():
        m.weight.fill_(scale)
    return m

def _helper():
    pass

not_callable = 3
'''


def _repo(path, extra=""):
    path.mkdir(parents=True)
    (path / "hubconf.py").write_text(HUBCONF + extra)
    return str(path)


def test_load_local_entrypoints(tmp_path):
    repo = _repo(tmp_path / "repo")
    m = ember.hub.load(repo, "tiny", 3, source="local", scale=2.0)
    assert isinstance(m, ember.nn.Linear) and m.weight.shape == (3, 3)
    assert m.weight.tolist()[0] == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="Cannot find callable not_callable in hubconf"):
        ember.hub.load(repo, "not_callable", source="local")
    with pytest.raises(ValueError, match="Invalid input: model should be a string of function "
                                         "name"):
        ember.hub.load(repo, 3, source="local")
    with pytest.raises(ValueError, match='Unknown source: "svn". Allowed values: "github" | '
                                         '"local".'):
        ember.hub.load(repo, "tiny", source="SVN")
    missing = _repo(tmp_path / "r2", "\ndependencies = ['numpy', 'no_such_pkg_xyz']\n")
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_pkg_xyz"):
        ember.hub.load(missing, "tiny", source="local")


def test_github_repo_from_the_cache(hub_dir, capsys, monkeypatch):
    def offline(url):
        raise URLError("offline")
    monkeypatch.setattr(ember.hub, "_open", offline)  # the same result on a networked machine
    hub_dir.mkdir(parents=True)
    repo = _repo(hub_dir / "someone_models_main")
    assert ember.hub.list("someone/models:main", trust_repo=True) == ["tiny"]
    assert ember.hub.help("someone/models:main", "tiny", trust_repo=True) == \
        "A Linear layer of the given width."
    m = ember.hub.load("someone/models", "tiny", width=4, trust_repo=True)  # main, found offline
    assert m.weight.shape == (4, 4)
    assert f"Using cache found in {repo}" in capsys.readouterr().err
    with pytest.raises(RuntimeError, match="no internet connection and the repo could not be "
                                           "found in the cache"):
        ember.hub.load("someone/other", "tiny", trust_repo=True)


def test_import_torch_hub_resolves_to_ember():
    import subprocess
    import sys
    code = ("import ember.compat; ember.compat.install(); import torch.hub;"
            " print(torch.hub.__name__, torch.hub.load_state_dict_from_url.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ember.hub", "ember.hub"]
