"""Output files written atomically: a temporary file beside the target, renamed into place when complete.

A character device or a named pipe (``/dev/null``, ``/dev/stdout``, a FIFO) cannot be replaced
and holds nothing to protect: it is written in place, after every regular output of the same
command is complete (:func:`write_all`). A directory, a socket or a block device is refused.
"""

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


def is_stream(target) -> bool:
    """Whether ``target`` exists and is a character device or a named pipe (FIFO): an output that
    is written in place (:func:`write_in_place`), never replaced."""
    try:
        mode = os.stat(target).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def check_output(target) -> None:
    """Raise OSError unless ``target`` is absent, a regular file, or a stream (:func:`is_stream`)."""
    if not is_stream(target):
        check_regular(Path(target))


def write_in_place(target, write, binary: bool = False) -> None:
    """``write(file)`` into the character device or named pipe ``target``, opened as it is (no
    temporary file, no rename, nothing created or truncated). A named pipe that no process reads
    is an error (ENXIO), not a wait for a reader that may never come."""
    fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        os.set_blocking(fd, True)  # non-blocking only to open: a slow reader is waited for
        fh = os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"}))
    except BaseException:
        os.close(fd)
        raise
    with fh:
        write(fh)


def write_all(files) -> None:
    """Write each ``(target, write, binary)`` of ``files`` and make them visible together: every
    regular target to a temporary file beside it (:func:`write_beside`), then every stream in place
    (:func:`write_in_place`), then the renames. A failure leaves every regular target as it was and
    no temporary file; the OSError raised has ``filename`` set to the target it concerns."""
    pending = []
    try:
        for target, write, binary in files:
            if not is_stream(target):
                try:
                    pending.append((write_beside(target, write, binary), target))
                except OSError as exc:
                    exc.filename = str(target)
                    raise
        for target, write, binary in files:
            if is_stream(target):
                try:
                    write_in_place(target, write, binary)
                except OSError as exc:
                    exc.filename = str(target)
                    raise
        while pending:
            tmp, target = pending[0]
            try:
                os.replace(tmp, target)
            except OSError as exc:
                exc.filename = str(target)
                raise
            pending.pop(0)
    finally:
        for tmp, _ in pending:
            discard(tmp)


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
