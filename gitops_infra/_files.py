"""Files given on a command line (a job's report, a results file), read within limits: one guarded reader.

Such a path may name anything: a FIFO, whose read blocks until a writer comes (forever, in CI), or a
device such as ``/dev/zero``, whose read never ends. Only a regular file of a sane size is read, and the
check is made on the descriptor that is read, so a file swapped for a FIFO after the check is still
refused. Every file a user names is read through it: ``fleet report``'s inputs, ``python -m bench
--compare``'s, ``contract check``'s FILE, the stack and project files (which a pull request may make a
FIFO, or a link to a device), a kubeconfig path in a provider's settings, and the stored ``pulumi login``
(tests/unit/test_user_files.py holds every other read to files gitops-infra made itself).
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from pathlib import Path

__all__ = ["FileRefused", "FileTooLarge", "NotARegularFile", "read_regular_file"]


class FileRefused(OSError):
    """A file this reader does not read; ``str()`` says why."""


class NotARegularFile(FileRefused):
    """A FIFO, a device, a socket or a directory."""


class FileTooLarge(FileRefused):
    """More than the reader's limit."""


def _share_lock(descriptor: int, wait: float) -> None:
    """A shared ``flock`` on ``descriptor``, waited for up to ``wait`` seconds (``FileRefused`` then)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise FileRefused(f"locked by another process for more than {wait:g} s") from None
            time.sleep(0.05)


def read_regular_file(path: Path, max_bytes: int, *, shared_lock: float | None = None) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes``.

    ``NotARegularFile`` or ``FileTooLarge`` when it is not one; any other ``OSError`` (no such file, no
    permission) as the system raised it. ``shared_lock`` reads under a shared ``flock``, waited for that
    many seconds (``FileRefused`` after them): the lock a writer that replaces the file in place takes,
    so that a read never sees it half-written (Pulumi's own files, written with go-internal's
    ``lockedfile``).

    Example::

        try:
            raw = read_regular_file(Path("report.json"), 256 * 1024 * 1024)
        except FileRefused as exc:
            print(f"report.json: {exc}")
    """
    if not stat.S_ISREG(path.stat().st_mode):  # nothing is opened: opening a FIFO wakes its writer
        raise NotARegularFile("not a regular file")
    # O_NONBLOCK: a FIFO put in its place since the check opens at once, and is refused by fstat below.
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            raise NotARegularFile("not a regular file")
        if found.st_size > max_bytes:
            raise FileTooLarge(f"larger than {max_bytes} bytes")
        if shared_lock is not None:
            _share_lock(descriptor, shared_lock)  # released when the descriptor is closed
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:  # a file that grows while it is read is cut one byte past the limit
            chunk = os.read(descriptor, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise FileTooLarge(f"larger than {max_bytes} bytes")
        return b"".join(chunks)
    finally:
        os.close(descriptor)
