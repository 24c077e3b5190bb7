"""Which processes of an earlier run are still alive: a lock's owner, a rollback's, Pulumi's plugins.

``recover`` and the rollback cleanup must never act under a process that is still working, so the two
questions they ask live here once.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path

import psutil

__all__ = ["LeftoverProcess", "alive_here", "leftover_plugins", "used_as_cwd"]

# What Pulumi runs beside the engine: the language host, the program it starts, plugins (providers,
# dynamic providers, policy packs). Matched on the executable's or script's base name.
_PLUGIN_PREFIXES = ("pulumi-language-", "pulumi-resource-", "pulumi-analyzer-", "pulumi-language-python-exec")


def alive_here(host: str, pid: int) -> bool:
    """True when ``host`` is this machine and process ``pid`` runs on it.

    A zombie is dead: a killed engine whose parent died too waits, unreaped, for an init that may
    never reap it (a container's first process often does not).
    """
    if host != socket.gethostname():
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # it exists; it just is not ours


@dataclass(frozen=True)
class LeftoverProcess:
    """A Pulumi plugin process still running in a project after its engine died."""

    pid: int
    name: str

    def __str__(self) -> str:
        return f"{self.name} (pid {self.pid})"


def _plugin_name(process: psutil.Process) -> str | None:
    try:
        for part in process.cmdline()[:2]:
            name = Path(part).name
            if name.startswith(_PLUGIN_PREFIXES):
                return name
    except (psutil.Error, OSError):
        return None
    return None


def _inside(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def leftover_plugins(*directories: Path) -> tuple[LeftoverProcess, ...]:
    """Pulumi plugin processes whose working directory is inside one of ``directories`` and whose engine
    is gone.

    After ``kill -9`` of a whole process group the engine dies, but its language host and providers may
    not: Pulumi starts them in process groups of their own, so they are re-parented and may still be
    creating or deleting resources. An engine would be their parent; these have none of ours (they
    belong to init now, or to a parent that is not ``pulumi``). A rollback's or a promotion's run in
    their temporary worktree, so the caller names those too.
    """
    roots = tuple(directory.resolve() for directory in directories)
    found: list[LeftoverProcess] = []
    for process in psutil.process_iter():
        name = _plugin_name(process)
        if name is None:
            continue
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            cwd = Path(process.cwd()).resolve()
            parent = process.parent()
            parent_name = parent.name() if parent is not None else ""
        except (psutil.Error, OSError):
            continue
        if _inside(cwd, roots) and not parent_name.startswith("pulumi"):
            found.append(LeftoverProcess(pid=process.pid, name=name))
    return tuple(found)


def used_as_cwd(directory: Path) -> bool:
    """True when a live process works inside ``directory``: it must not be removed from under it.

    Another user's processes are not looked at: a rollback's worktree is in a directory only its owner
    can enter (``mkdtemp``).
    """
    root = (directory.resolve(),)
    for process in psutil.process_iter():
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            cwd = Path(process.cwd()).resolve()
        except (psutil.Error, OSError):
            continue
        if _inside(cwd, root):
            return True
    return False
