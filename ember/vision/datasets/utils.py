"""Download and archive helpers (torchvision.datasets.utils): md5 checks, downloads through
urllib with a short timeout, extraction of .tar(.gz)/.zip/.gz.

Downloads fail fast with a RuntimeError when the network is unreachable, rather than hang.
"""
import gzip
import hashlib
import os
import shutil
import tarfile
import urllib.error
import urllib.request
import zipfile

__all__ = ["calculate_md5", "check_md5", "check_integrity", "download_url", "extract_archive",
           "download_and_extract_archive"]

# seconds before an unreachable mirror counts as down (keeps offline machines from hanging)
DOWNLOAD_TIMEOUT = 10
_USER_AGENT = "pytorch/vision"


def calculate_md5(fpath, chunk_size=1024 * 1024):
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath, md5, **kwargs):
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath, md5=None):
    if not os.path.isfile(fpath):
        return False
    if md5 is None:
        return True
    return check_md5(fpath, md5)


def download_url(url, root, filename=None, md5=None, max_redirect_hops=3):
    root = os.path.expanduser(root)
    filename = filename or os.path.basename(url)
    fpath = os.path.join(root, filename)
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    tmp = fpath + ".part"
    try:
        req = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
        with urllib.request.urlopen(req, timeout=DOWNLOAD_TIMEOUT) as resp, \
                open(tmp, "wb") as out:
            shutil.copyfileobj(resp, out)
        os.replace(tmp, fpath)
    except (urllib.error.URLError, OSError) as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise RuntimeError(f"Could not download {url}: {e}. The network may be unreachable; "
                           f"place the file at {fpath} by hand and call again without "
                           "download=True.") from e
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


def extract_archive(from_path, to_path=None, remove_finished=False):
    to_path = to_path or os.path.dirname(from_path)
    os.makedirs(to_path, exist_ok=True)
    if from_path.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")):
        with tarfile.open(from_path) as tar:
            tar.extractall(to_path, filter="data")
    elif from_path.endswith(".zip"):
        with zipfile.ZipFile(from_path) as z:
            z.extractall(to_path)
    elif from_path.endswith(".gz"):
        out = os.path.join(to_path, os.path.basename(from_path)[:-3])
        with gzip.open(from_path, "rb") as f, open(out, "wb") as g:
            shutil.copyfileobj(f, g)
    else:
        raise RuntimeError(f"Extraction of {from_path} not supported")
    if remove_finished:
        os.remove(from_path)
    return to_path


def download_and_extract_archive(url, download_root, extract_root=None, filename=None,
                                 md5=None, remove_finished=False):
    download_root = os.path.expanduser(download_root)
    extract_root = extract_root or download_root
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    archive = os.path.join(download_root, filename)
    print(f"Extracting {archive} to {extract_root}")
    extract_archive(archive, extract_root, remove_finished)
