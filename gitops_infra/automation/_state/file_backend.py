"""The files Pulumi's file backend keeps for one stack: its lock, its checkpoint and the checkpoint history.

``recover`` reads them directly, because it runs exactly when the engine cannot: while a dead update's
lock stands, or after a full disk cut the checkpoint short (every command then fails with "failed to
load checkpoint"). The history is read directly too, where it can be, because an engine command per
stack was most of ``status --all`` and of each operation's result. The layouts are the DIY backend's
(``pkg/backend/diy``)::

    .pulumi/locks/<org>/<project>/<stack>/<lock id>.json       project-scoped (meta.yaml version 1)
    .pulumi/locks/<stack>/<lock id>.json                        legacy
    .pulumi/stacks/<project>/<stack>.json[.gz]                  the checkpoint (legacy: stacks/<stack>)
    .pulumi/history/<project>/<stack>/<stack>-<ns>.checkpoint.json[.gz]   a copy after each update
    .pulumi/history/<project>/<stack>/<stack>-<ns>.history.json[.gz]      the update's history entry

Other backends keep all of this server-side; ``FileBackendStack.of`` returns ``None`` for them.
"""

from __future__ import annotations

import gzip
import json
import shutil
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..results.status import StackLock

__all__ = ["DamagedLock", "FileBackendStack", "LockInfo"]

DIY_ORG = "organization"
"""The only org a file backend knows."""
_CHECKPOINT_SUFFIXES = (".json", ".json.gz")
_HISTORY_SUFFIXES = (".history.json", ".history.json.gz")
_HISTORY_ZSTD = ".history.json.zst"


@dataclass(frozen=True)
class LockInfo(StackLock):
    """A lock as the lock file says, and where that file is."""

    path: Path


@dataclass(frozen=True)
class DamagedLock:
    """A file in the stack's lock directory that is no lock the engine can read: empty, or cut short by a
    crash or a full disk while it was written (the blob library writes ``<id>.json.<n>.tmp`` there first).

    The engine takes every file there for a lock and reads each (``checkForLock``,
    ``pkg/backend/diy/lock.go``, v3.274): this one fails that read ("unexpected end of JSON input"), so
    every command on the stack fails until it is removed. ``pulumi cancel`` removes it.
    """

    path: Path
    problem: str

    def __str__(self) -> str:
        return f"{self.path} {self.problem}"


def _read_json(path: Path) -> Any:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def checkpoint_problem(path: Path) -> str | None:
    """``None`` when ``path`` holds a readable checkpoint, else what is wrong with it."""
    try:
        data = _read_json(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    except (ValueError, EOFError, gzip.BadGzipFile):
        return "is not valid JSON (cut short, perhaps by a full disk)"
    if not isinstance(data, dict) or ("checkpoint" not in data and "latest" not in data):
        return "is JSON but not a Pulumi checkpoint"
    return None


def _lock(path: Path, raw: bytes) -> LockInfo | DamagedLock:
    """The lock file at ``path``, holding ``raw``: who holds it, or what is wrong with it."""
    if not raw.strip():
        return DamagedLock(path, "is empty")
    try:
        data = json.loads(raw)
    except ValueError:
        return DamagedLock(path, "is not valid JSON (cut short, perhaps by a crash or a full disk)")
    try:
        return LockInfo(
            user=str(data["username"]), host=str(data["hostname"]), pid=int(data["pid"]), path=path
        )
    except (KeyError, TypeError, ValueError):
        return DamagedLock(path, "is JSON but names no holder (username, hostname, pid)")


@dataclass(frozen=True)
class FileBackendStack:
    """One stack's files in a file backend rooted at ``root``."""

    root: Path
    org: str
    project: str
    name: str

    @classmethod
    def of(cls, backend_url: str, *, org: str | None, project: str, name: str) -> FileBackendStack | None:
        """The stack's files, or ``None`` when the backend is not a local file backend."""
        if not backend_url.startswith("file://"):
            return None
        path = Path(urllib.parse.unquote(backend_url.removeprefix("file://").split("?", 1)[0])).expanduser()
        return cls(root=path / ".pulumi", org=org or DIY_ORG, project=project, name=name)

    @property
    def lock_dirs(self) -> tuple[Path, ...]:
        """Where the stack's lock may be, in both layouts."""
        return (self.root / "locks" / self.org / self.project / self.name, self.root / "locks" / self.name)

    def locks(self) -> list[LockInfo]:
        """Every lock of the stack that names its holder; see :meth:`damaged_locks` for the others."""
        return [lock for lock in self._lock_files() if isinstance(lock, LockInfo)]

    def damaged_locks(self) -> list[DamagedLock]:
        """Every file of the stack's lock directories that the engine takes for a lock but that names no
        holder: each blocks the stack as a lock does (see :class:`DamagedLock`)."""
        return [lock for lock in self._lock_files() if isinstance(lock, DamagedLock)]

    def _lock_files(self) -> list[LockInfo | DamagedLock]:
        """Each file the engine takes for a lock of the stack, read: every file of a lock directory, of any
        name (not only ``*.json``), but the blob library's ``.attrs`` sidecars, as ``checkForLock`` lists
        them. One gone since it was listed was released in between, and is no lock."""
        found: list[LockInfo | DamagedLock] = []
        for directory in self.lock_dirs:
            try:
                paths = sorted(path for path in directory.iterdir() if not path.name.endswith(".attrs"))
            except OSError:  # no lock directory (never locked), or not a directory
                continue
            for path in paths:
                if path.is_dir():
                    continue
                try:
                    raw = path.read_bytes()
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    found.append(DamagedLock(path, f"cannot be read ({exc.strerror or type(exc).__name__})"))
                    continue
                found.append(_lock(path, raw))
        return found

    def checkpoint(self) -> Path | None:
        """The stack's checkpoint file, in whichever layout and compression it is kept."""
        for base in (self.root / "stacks" / self.project / self.name, self.root / "stacks" / self.name):
            for suffix in _CHECKPOINT_SUFFIXES:
                candidate = base.with_name(base.name + suffix)
                if candidate.is_file():
                    return candidate
        return None

    def resource_types(self) -> set[str] | None:
        """The types of the resources in the stack's checkpoint; ``None`` when it cannot be read here."""
        resources = self.resources()
        return None if resources is None else {str(r.get("type")) for r in resources}

    def resources(self) -> list[dict[str, Any]] | None:
        """The checkpoint's resources, as the engine wrote them (no value decrypted); ``None`` when it
        cannot be read here."""
        path = self.checkpoint()
        if path is None:
            return None
        try:
            latest = (_read_json(path).get("checkpoint") or {}).get("latest") or {}
            return [r for r in latest.get("resources") or [] if isinstance(r, dict)]
        except (OSError, ValueError, EOFError, AttributeError, gzip.BadGzipFile):
            return None

    def history_checkpoints(self) -> list[Path]:
        """The copies of the checkpoint the backend kept after each update, newest first."""
        found: list[tuple[int, Path]] = []
        history = self.root / "history"
        for directory in (history / self.project / self.name, history / self.name):
            for path in directory.glob(f"{self.name}-*.checkpoint.json*"):
                stamp = path.name.removeprefix(f"{self.name}-").split(".", 1)[0]
                if stamp.isdigit() and path.name.endswith(_CHECKPOINT_SUFFIXES):
                    found.append((int(stamp), path))
        return [path for _, path in sorted(found, reverse=True)]

    def _history_names(self) -> tuple[Path, list[str]]:
        """The directory of the stack's history entries and their file names, oldest first, as the engine
        orders them (``pkg/backend/diy/state.go``: every entry in the directory, by name, which is
        ``<stack>-<nanoseconds>``)."""
        history = self.root / "history"
        for directory in (history / self.project / self.name, history / self.name):
            names = sorted(
                path.name
                for path in directory.glob("*.history.json*")
                if path.name.endswith((*_HISTORY_SUFFIXES, _HISTORY_ZSTD))
            )
            if names:
                return directory, names
        return history, []

    @staticmethod
    def _history_entry(path: Path) -> dict[str, Any] | None:
        """One history entry; ``None`` when it cannot be read here (zstd-compressed, or unreadable)."""
        if path.name.endswith(_HISTORY_ZSTD):
            return None  # no zstd in the standard library
        try:
            entry = _read_json(path)
        except (OSError, ValueError, EOFError, gzip.BadGzipFile):
            return None
        return entry if isinstance(entry, dict) else None

    def newest_history_entry(self) -> tuple[int, dict[str, Any]] | None:
        """How many entries the stack's history holds, and the newest one, as ``pulumi stack history``
        reads them. ``None`` when there is none, or the newest cannot be read here."""
        directory, names = self._history_names()
        newest = self._history_entry(directory / names[-1]) if names else None
        return (len(names), newest) if newest is not None else None

    def history_entries(self) -> list[dict[str, Any]] | None:
        """Every entry of the stack's history, newest first, as ``pulumi stack history`` lists them.

        ``None`` when there is none, or any one cannot be read here: the engine then reads them all.
        """
        directory, names = self._history_names()
        entries = [self._history_entry(directory / name) for name in reversed(names)]
        if not entries or any(entry is None for entry in entries):
            return None
        return [entry for entry in entries if entry is not None]

    def newest_intact_checkpoint(self) -> Path | None:
        """The newest history checkpoint that reads as a checkpoint."""
        return next((path for path in self.history_checkpoints() if checkpoint_problem(path) is None), None)

    def restore(self, broken: Path, intact: Path) -> Path:
        """Put ``intact`` in place of ``broken``, keeping ``broken`` aside; return where it was kept.

        The copy goes to a temporary name first and is renamed over the checkpoint, so a second full disk
        cannot leave a half-written checkpoint behind.
        """
        kept = broken.with_name(f"{broken.name}.broken-{time.strftime('%Y%m%dT%H%M%S')}")
        shutil.copy2(broken, kept)
        staging = broken.with_name(f".{broken.name}.restoring")
        shutil.copyfile(intact, staging)
        staging.replace(broken)
        return kept
