"""Output files written atomically: a temporary file beside the target, renamed into place when complete."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_regular(target: Path) -> None:
    """Raise OSError unless ``target`` is absent or a regular file: a device, FIFO, socket or
    directory is never replaced by an output (as root, renaming onto /dev/null would replace it)."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EEXIST, "exists and is not a regular file (a device, FIFO, socket or directory); "
                                    "name a regular file")


def write_atomically(target, write, binary: bool = False) -> None:
    """``write(file)`` into a temporary file beside ``target``, renamed into place only when it is
    complete: a failed or interrupted write leaves any previous ``target`` as it was. The file gets
    the previous file's permissions, or those a new file gets under the umask (0666 & ~umask).
    Raises OSError (with ``strerror``) when the file cannot be written."""
    tmp = write_beside(target, write, binary)
    try:
        os.replace(tmp, target)
        tmp = None
    finally:
        discard(tmp)


def write_beside(target, write, binary: bool = False) -> str:
    """``write(file)`` into a temporary file beside ``target`` (with the permissions that
    :func:`write_atomically` gives); returns its path, for ``os.replace(path, target)`` once every
    output of a run is complete. Nothing is left behind when ``write`` fails."""
    target = Path(target)
    check_regular(target)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = None, None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
            fd = None
            write(fh)
        done, tmp = tmp, None
        return done
    finally:
        if fd is not None:
            os.close(fd)
        discard(tmp)


def discard(tmp) -> None:
    """Remove the temporary file ``tmp`` if there is one (``None``: nothing to do)."""
    if tmp is not None and os.path.exists(tmp):
        os.unlink(tmp)
