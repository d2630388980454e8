"""`ember.hub`, as torch.hub: the hub cache directory, checkpoints by URL, and models from a
repository's `hubconf.py`.

What is already in the cache is used as it is: a checkpoint at `<hub dir>/checkpoints/<file>`
loads with `ember.load`, a GitHub repository unpacked at `<hub dir>/<owner>_<name>_<ref>`
loads its entrypoints. Anything else must be downloaded; a download that cannot connect fails
within `DOWNLOAD_TIMEOUT` seconds (name resolution included) with urllib's error, noting
where to put the file by hand, instead of waiting on a network that is not there.
"""
import contextlib
import errno
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import threading
import uuid
import warnings
import zipfile
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
DOWNLOAD_TIMEOUT = 10.0
READ_DATA_CHUNK = 128 * 1024
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")

_hub_dir = None


def _get_torch_home():
    return os.path.expanduser(os.getenv(
        "TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")))


def get_dir():
    """The hub cache directory: set_dir's, else $TORCH_HOME/hub ($TORCH_HOME defaulting to
    $XDG_CACHE_HOME/torch, that to ~/.cache)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ---- downloads --------------------------------------------------------------------------
def _open(url):
    """urlopen, given at most DOWNLOAD_TIMEOUT seconds to connect (DNS lookups do not obey
    socket timeouts, so the attempt runs in a thread we stop waiting for)."""
    result = {}

    def attempt():
        try:
            req = Request(url, headers={"User-Agent": "torch.hub"})
            result["response"] = urlopen(req, timeout=DOWNLOAD_TIMEOUT)
        except BaseException as e:  # handed to the caller's thread
            result["error"] = e
    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(DOWNLOAD_TIMEOUT)
    if "response" in result:
        return result["response"]
    error = result.get("error") or URLError(f"timed out after {DOWNLOAD_TIMEOUT} seconds")
    raise error


class _PlainProgress:
    """The progress bar when the tqdm package is absent: the share done (or the bytes, when
    the size is unknown) rewritten on one stderr line."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total = total
        self.disable = disable
        self.n = 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.disable:
            sys.stderr.write("\n")


try:  # the progress bar downloads show (torch.hub.tqdm; torchvision imports it)
    from tqdm import tqdm
except ImportError:
    tqdm = _PlainProgress


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download `url` to the path `dst` (through a temporary file next to it); with
    `hash_prefix`, the file's SHA256 must start with it."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        partial = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(partial, "x+b")
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    try:
        try:
            response = _open(url)
        except URLError as e:
            e.add_note(f"ember.hub could not download {url} (no connection within "
                       f"{DOWNLOAD_TIMEOUT:g} s). To use the file offline, put it at {dst}.")
            raise
        with response as u:
            lengths = u.info().get_all("Content-Length")
            total = int(lengths[0]) if lengths else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with tqdm(total=total, disable=not progress, unit="B", unit_scale=True,
                      unit_divisor=1024) as bar:
                while True:
                    buffer = u.read(READ_DATA_CHUNK)
                    if not buffer:
                        break
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    bar.update(len(buffer))
        f.close()
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                   f'"{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _safe_extract_zip(zf, target):
    root = os.path.realpath(target)
    for member in zf.infolist():
        name = member.filename
        if os.path.isabs(name) or re.match(r"^[A-Za-z]:", name):
            raise ValueError(f"Archive entry has absolute path: {name}")
        path = os.path.realpath(os.path.join(root, name))
        if os.path.commonpath([root, path]) != root:
            raise ValueError(f"Archive entry escapes the target directory: {name}")
    zf.extractall(target)


def _is_legacy_zip_format(filename):
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infos = zf.infolist()
        return len(infos) == 1 and not infos[0].is_dir()
    return False


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=None):
    """Load the checkpoint at `url` with ember.load, from `<model_dir>` (default
    `<hub dir>/checkpoints`) when it is there already, downloading it there otherwise.
    Weights-only unless the caller passes `weights_only=False` (PyTorch's default is False:
    a downloaded file could then run code)."""
    from .serialization import load as _load
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            match = HASH_REGEX.search(filename)
            hash_prefix = match.group(1) if match else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        with zipfile.ZipFile(cached_file) as zf:
            _safe_extract_zip(zf, model_dir)
            cached_file = os.path.join(model_dir, zf.infolist()[0].filename)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)


# ---- hubconf entrypoints ------------------------------------------------------------------
@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    with _add_to_sys_path(repo_dir):
        spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def _load_entry_from_hubconf(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    deps = getattr(module, VAR_DEPENDENCY, None)
    if deps is not None:
        missing = [pkg for pkg in deps if importlib.util.find_spec(pkg) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _parse_repo_info(github):
    repo_info, ref = github.split(":") if ":" in github else (github, None)
    owner, name = repo_info.split("/")
    if ref is None:
        try:
            with _open(f"https://github.com/{owner}/{name}/tree/main/"):
                ref = "main"
        except HTTPError as e:
            if e.code != 404:
                raise
            ref = "master"
        except URLError as e:
            for candidate in ("main", "master"):
                if os.path.exists(f"{get_dir()}/{owner}_{name}_{candidate}"):
                    ref = candidate
                    break
            if ref is None:
                raise RuntimeError("It looks like there is no internet connection and the repo "
                                   f"could not be found in the cache ({get_dir()})") from e
    return owner, name, ref


def _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo):
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(path):
        open(path, "a").close()
    with open(path) as f:
        trusted = tuple(line.strip() for line in f)
    downloaded = next(os.walk(hub_dir))[1]
    owner_name = f"{owner}_{name}"
    is_trusted = (owner_name in trusted or owner_name_branch in downloaded
                  or owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted "
                         "repositories and as such cannot be downloaded. Do you trust this "
                         "repository and wish to add it to the trusted list of repositories "
                         "(y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(path, "a") as f:
            f.write(owner_name + "\n")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                         skip_validation=False):
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    normalized = ref.replace("/", "_")
    owner_name_branch = "_".join([owner, name, normalized])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    cached_file = os.path.join(hub_dir, normalized + ".zip")
    if os.path.exists(cached_file):
        os.remove(cached_file)
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
    download_url_to_file(url, cached_file, progress=False)
    with zipfile.ZipFile(cached_file) as zf:
        extracted = os.path.join(hub_dir, zf.infolist()[0].filename)
        if os.path.exists(extracted):
            shutil.rmtree(extracted)
        _safe_extract_zip(zf, hub_dir)
    os.remove(cached_file)
    if os.path.exists(repo_dir):
        shutil.rmtree(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):
    """The public callables of a GitHub repository's hubconf.py."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                    skip_validation=skip_validation)
    module = _import_hubconf(repo_dir)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):
    """The docstring of the entrypoint `model` of a GitHub repository's hubconf.py."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                                    skip_validation=skip_validation)
    return _load_entry_from_hubconf(_import_hubconf(repo_dir), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call the entrypoint `model` of the hubconf.py of a local directory (`source='local'`)
    or of a GitHub repository ("owner/name[:ref]")."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo,
                                           verbose=verbose, skip_validation=skip_validation)
    with _add_to_sys_path(repo_or_dir):
        module = _import_hubconf(repo_or_dir)
        entry = _load_entry_from_hubconf(module, model)
        return entry(*args, **kwargs)

