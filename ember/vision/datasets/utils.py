"""Download and archive helpers (torchvision.datasets.utils): md5 checks, downloads through
urllib with a short timeout, extraction of .tar(.gz)/.zip/.gz.

Downloads fail fast when the network is unreachable, rather than hang, with urllib's own
error (URLError, an OSError) as torchvision's do, so code that catches it still does.
"""
import bz2
import gzip
import hashlib
import lzma
import os
import re
import shutil
import tarfile
import urllib.error
import urllib.request
import zipfile

import numpy as np

__all__ = ["calculate_md5", "check_md5", "check_integrity", "download_url", "extract_archive",
           "download_and_extract_archive", "download_file_from_google_drive", "list_dir",
           "list_files", "iterable_to_str", "verify_str_arg"]

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
    except OSError:  # URLError included
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
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
    elif from_path.endswith((".gz", ".xz", ".bz2")):
        # a single compressed file: written beside, without its compression suffix
        stem, suffix = os.path.splitext(os.path.basename(from_path))
        opener = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}[suffix]
        with opener(from_path, "rb") as f, open(os.path.join(to_path, stem), "wb") as g:
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


def download_file_from_google_drive(file_id, root, filename=None, md5=None):
    """A Google Drive file by id, through Drive's direct-download address (no gdown needed)."""
    download_url(f"https://drive.google.com/uc?export=download&id={file_id}", root,
                 filename or file_id, md5)


def list_dir(root, prefix=False):
    root = os.path.expanduser(root)
    found = [p for p in os.listdir(root) if os.path.isdir(os.path.join(root, p))]
    return [os.path.join(root, d) for d in found] if prefix is True else found


def list_files(root, suffix, prefix=False):
    root = os.path.expanduser(root)
    found = [p for p in os.listdir(root)
             if os.path.isfile(os.path.join(root, p)) and p.endswith(suffix)]
    return [os.path.join(root, d) for d in found] if prefix is True else found


def iterable_to_str(iterable):
    return "'" + "', '".join(str(item) for item in iterable) + "'"


def verify_str_arg(value, arg=None, valid_values=None, custom_msg=None):
    """`value` when it is a str among `valid_values`; torchvision's ValueError otherwise."""
    if not isinstance(value, str):
        where = "" if arg is None else f" for argument {arg}"
        raise ValueError(f"Expected type str{where}, but got type {type(value)}.")
    if valid_values is None or value in valid_values:
        return value
    raise ValueError(custom_msg if custom_msg is not None else
                     f"Unknown value '{value}' for argument {arg}. Valid values are "
                     f"{{{iterable_to_str(valid_values)}}}.")


def _read_pfm(file_name, slice_channels=2):
    """A .pfm file (1 or 3 float channels, rows stored bottom-up) as float32 (C, H, W)."""
    with open(file_name, "rb") as f:
        header = f.readline().rstrip()
        if header not in (b"PF", b"Pf"):
            raise ValueError("Invalid PFM file")
        dims = re.match(rb"^(\d+)\s(\d+)\s$", f.readline())
        if not dims:
            raise Exception("Malformed PFM header.")
        width, height = (int(d) for d in dims.groups())
        # a negative scale marks little-endian data
        endian = "<" if float(f.readline().rstrip()) < 0 else ">"
        data = np.fromfile(f, dtype=endian + "f")
    channels = 3 if header == b"PF" else 1
    data = np.flip(data.reshape(height, width, channels).transpose(2, 0, 1), axis=1)
    return data[:slice_channels].astype(np.float32)
