"""The gitops-infra CrossGuard policy pack (``PulumiPolicy.yaml`` + ``__main__.py`` in this directory).

Wherever the package is installed, :func:`pack_dir` gives a ready-to-use copy of the pack whose runtime is
the current interpreter's environment; the automation layer resolves :data:`POLICY_PACK` to it, and the
CLI's ``--policy-pack gitops-infra`` too. From a shell::

    pulumi preview --policy-pack "$(gitops-infra policy path)"

or through the automation layer::

    from gitops_infra.automation import preview
    from gitops_infra.policy import POLICY_PACK

    preview("prod", policy_packs=[POLICY_PACK])

In a checkout set up by ``make setup``, ``--policy-pack gitops_infra/policy`` runs this directory itself
(its ``PulumiPolicy.yaml`` names the checkout's ``.venv``).

The policies and their enforcement levels are in :mod:`gitops_infra.policy.pack`; the checks are plain
functions in :mod:`gitops_infra.policy.rules`. Importing this package does not start the pack.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from .._metadata import package_version
from ..errors import WorkspaceError

__all__ = ["POLICY_PACK", "pack_dir", "resolve_policy_packs"]

POLICY_PACK = "gitops-infra"
"""The bundled pack, by name: in ``policy_packs`` (or ``--policy-pack``) it stands for :func:`pack_dir`."""

_SOURCE = Path(__file__).parent
_FILES = ("PulumiPolicy.yaml", "__main__.py")
_VIRTUALENV_LINE = "    virtualenv: "


def _cache_root() -> Path:
    # The XDG spec: a relative XDG_CACHE_HOME is invalid and is ignored.
    base = os.environ.get("XDG_CACHE_HOME") or ""
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "gitops-infra" / "policy"


def _settings(environment: str) -> str:
    """The pack's ``PulumiPolicy.yaml``, its runtime pointed at ``environment``."""
    lines = (_SOURCE / "PulumiPolicy.yaml").read_text().splitlines()
    if not any(line.startswith(_VIRTUALENV_LINE) for line in lines):
        raise RuntimeError(f"{_SOURCE / 'PulumiPolicy.yaml'} names no runtime virtualenv to replace")
    # A JSON string is a YAML double-quoted scalar: the path is quoted safely whatever it holds.
    pointed = (
        f"{_VIRTUALENV_LINE}{json.dumps(environment)}" if line.startswith(_VIRTUALENV_LINE) else line
        for line in lines
    )
    header = f"# The gitops-infra policy pack, as gitops_infra.policy.pack_dir() wrote it for {environment}."
    return "\n".join([header, *(line for line in pointed if not line.startswith("#"))]) + "\n"


def pack_dir() -> Path:
    """A directory holding the bundled pack, ready for ``--policy-pack``, that runs on this interpreter.

    The Python language host runs a policy pack only in the virtualenv its ``PulumiPolicy.yaml`` names,
    and the one shipped inside the package names a checkout's ``.venv``. So the pack is copied once
    into the user's cache (``$XDG_CACHE_HOME/gitops-infra/policy``, else ``~/.cache/...``) with
    ``sys.prefix`` as its virtualenv, keyed by that environment, the package version and the pack's
    files. On every use the copy is compared with the bundled bytes and written again on any
    difference, and the cache's directories must be this user's and writable by no one else: a pack
    planted or changed there would otherwise run as this user with every policy replaced. The copy is
    written aside and renamed into place, so a second process never sees half of it.
    """
    try:
        return _materialise()
    except OSError as exc:
        raise WorkspaceError(
            f"could not write the gitops-infra policy pack into {_cache_root()}: {exc.strerror or exc}; "
            "set XDG_CACHE_HOME to a writable directory"
        ) from exc


def _materialise() -> Path:
    # Here, not at the top: the CLI reads POLICY_PACK from this module when it starts.
    import hashlib
    import tempfile

    wanted = {
        "PulumiPolicy.yaml": _settings(sys.prefix).encode(),
        "__main__.py": (_SOURCE / "__main__.py").read_bytes(),
    }
    version = package_version()
    key = hashlib.sha256("\0".join((sys.prefix, version)).encode() + b"\0".join(wanted.values())).hexdigest()[
        :16
    ]
    root = _cache_root()
    target = root / f"{version}-{key}"
    root.parent.parent.mkdir(parents=True, exist_ok=True)  # the user's cache: ours start below it
    _own_directory(root.parent)
    _own_directory(root)
    # Compared on every use, not trusted for existing: a copy someone changed would run as this user.
    if _holds(target, wanted):
        return target
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))  # mode 0700
    try:
        for name, content in wanted.items():
            (staging / name).write_bytes(content)
        if target.is_symlink() or target.exists():
            _discard(target, root)
        try:
            staging.rename(target)
        except OSError:
            if not _holds(target, wanted):
                raise  # not another process's finished copy: a real failure
    finally:
        _discard(staging, root)
    return target


def _own_directory(path: Path) -> None:
    """Make ``path`` (mode 0700) or check it: a real directory of this user's, writable by no one else.

    Another user's directory, or one others may write to, could hold a pack that runs as this user (a
    shared runner's cache, a world-writable ``XDG_CACHE_HOME``).
    """
    with contextlib.suppress(FileExistsError):  # a file or a symlink by that name: refused below
        path.mkdir(mode=0o700, exist_ok=True)
    info = path.lstat()
    problem = None
    if stat.S_ISLNK(info.st_mode):
        problem = "is a symlink"
    elif not stat.S_ISDIR(info.st_mode):
        problem = "is not a directory"
    elif info.st_uid != os.getuid():
        problem = f"is owned by another user (uid {info.st_uid})"
    elif info.st_mode & 0o022:
        problem = f"is writable by group or others (mode {stat.S_IMODE(info.st_mode):o})"
    if problem is not None:
        raise WorkspaceError(
            f"the policy pack cache {path} {problem}: a pack there could be replaced by someone else and "
            "run as you; remove it, or set XDG_CACHE_HOME to a directory of your own"
        )


def _holds(target: Path, wanted: dict[str, bytes]) -> bool:
    """True when ``target`` is a real directory holding exactly these files, byte for byte."""
    try:
        if not stat.S_ISDIR(target.lstat().st_mode):
            return False
        if sorted(entry.name for entry in target.iterdir()) != sorted(wanted):
            return False
        for name, content in wanted.items():
            if not stat.S_ISREG((target / name).lstat().st_mode) or (target / name).read_bytes() != content:
                return False
    except OSError:
        return False
    return True


def _discard(path: Path, root: Path) -> None:
    """Remove ``path`` (a stale or tampered copy, a staging directory) without following a symlink."""
    import shutil

    if path.parent != root:
        return
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def resolve_policy_packs(packs: Sequence[str]) -> list[str]:
    """``packs`` with :data:`POLICY_PACK` replaced by :func:`pack_dir`, and each path made absolute.

    A relative path means this process's directory: the engine runs from the project's, where it would
    name another directory or none.
    """
    return [str(pack_dir()) if pack == POLICY_PACK else os.path.abspath(pack) for pack in packs]
