"""Writing a checkpoint to a path so that no interruption, not even a kill, destroys the
previous file or leaves a full-size temporary behind.

The bytes go to a file with no name in the target's folder (Linux's O_TMPFILE): a process
killed while writing leaves nothing, the kernel frees the blocks. Only when the data are
complete and synced does the file get a name, `.<target>.<pid>-<thread>.ember-save`, which is
renamed over the target at once. Where O_TMPFILE is not available, or the system will not
give such a file a name (some sandboxes refuse the link), the temporary is named from the
start. Either way a temporary is named for its target, its process and its thread, so
concurrent savers (to different files in one folder, or threads of one process) never share
one, and each save sweeps the temporaries of its target left by processes that no longer
exist.
"""
import os
import threading

__all__ = ["replace_atomically", "LEGACY_MAGIC", "LEGACY_PROTOCOL"]

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
_SUFFIX = ".ember-save"


def _temp_name(folder, base):
    return os.path.join(folder, f".{base}.{os.getpid()}-{threading.get_ident()}{_SUFFIX}")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process, or cannot tell: leave its file alone
    return True


def sweep_stale(folder, base):
    """Remove this target's temporaries whose writing process is gone (killed mid-save)."""
    prefix = f".{base}."
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(_SUFFIX)):
            continue
        owner = name[len(prefix):-len(_SUFFIX)].partition("-")[0]
        if owner.isdigit() and int(owner) != os.getpid() and not _alive(int(owner)):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass


_CANNOT_LINK = set()  # devices where an unnamed file cannot be given a name (a sandbox)


def _open_unnamed(folder):
    """A writable file with no name in `folder`, or None where the system has none."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        if os.stat(folder).st_dev in _CANNOT_LINK:
            return None
    except OSError:
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY, 0o666)
    except OSError:  # a file system without O_TMPFILE support
        return None


def replace_atomically(path, write):
    """Call `write(binary file)` to fill a temporary beside `path`, then make it `path`."""
    path = os.path.abspath(os.fspath(path))
    folder, base = os.path.split(path)
    sweep_stale(folder, base)
    tmp = _temp_name(folder, base)
    if not _write_unnamed(folder, tmp, write):
        _write_named(tmp, write)
    try:
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp):
    try:
        os.unlink(tmp)
    except OSError:
        pass


def _write_unnamed(folder, tmp, write):
    """Write into a file with no name, and name it `tmp` once complete; False where the
    system cannot (then nothing was left behind)."""
    fd = _open_unnamed(folder)
    if fd is None:
        return False
    with os.fdopen(fd, "wb") as out:
        write(out)
        out.flush()
        os.fsync(out.fileno())
        _remove(tmp)  # a leftover of this very thread's earlier, killed save
        try:
            os.link(f"/proc/self/fd/{out.fileno()}", tmp, follow_symlinks=True)
        except OSError:  # linking an unnamed file not permitted here: not tried again
            _CANNOT_LINK.add(os.fstat(out.fileno()).st_dev)
            return False
    return True


def _write_named(tmp, write):
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        _remove(tmp)
        raise
