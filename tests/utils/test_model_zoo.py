"""ember.utils.model_zoo: load_url reads checkpoints from the hub cache (PyTorch's own files
too), downloads what is missing with a progress bar, and fails clearly with no connection."""
import functools
import http.server
import os
import threading
from urllib.error import URLError

import numpy as np
import pytest

import ember
from ember.utils import model_zoo


@pytest.fixture
def torch_home(tmp_path, monkeypatch):
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_load_url_is_the_hub_loader():
    assert model_zoo.load_url is ember.hub.load_state_dict_from_url
    assert model_zoo.tqdm is ember.hub.tqdm


def test_reads_torch_checkpoint_from_the_hub_cache(torch, torch_home, capsys):
    checkpoints = torch_home / "hub" / "checkpoints"
    checkpoints.mkdir(parents=True)
    torch.save({"weight": torch.eye(3)}, checkpoints / "net-12ab.pth")
    state = model_zoo.load_url("https://download.example.invalid/net-12ab.pth")
    np.testing.assert_array_equal(state["weight"].numpy(), np.eye(3, dtype=np.float32))
    assert capsys.readouterr().out == ""


def test_downloads_with_progress_into_the_cache(torch_home, tmp_path, capsys):
    (tmp_path / "srv").mkdir()
    ember.save({"b": ember.arange(4)}, str(tmp_path / "srv" / "small.pt"))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(tmp_path / "srv"))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/small.pt"
        state = model_zoo.load_url(url)
    finally:
        server.shutdown()
    assert state["b"].tolist() == [0, 1, 2, 3]
    cached = torch_home / "hub" / "checkpoints" / "small.pt"
    assert cached.exists()
    captured = capsys.readouterr()
    assert captured.out == f'Downloading: "{url}" to {cached}\n'
    if ember.hub.tqdm is ember.hub._PlainProgress:
        assert captured.err.endswith("100.0%\n")
    else:
        assert "100%" in captured.err


def test_no_connection_is_a_clear_error(torch_home, monkeypatch):
    import socket
    with socket.socket() as probe:  # a port nothing listens on: refused at once
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(URLError) as info:
        model_zoo.load_url(f"http://127.0.0.1:{port}/missing-1234.pth", progress=False)
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "could not download" in notes and "put it at" in notes
    assert os.listdir(torch_home / "hub" / "checkpoints") == []
