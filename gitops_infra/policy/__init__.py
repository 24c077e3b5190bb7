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

import json
import os
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
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gitops-infra" / "policy"


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
    files, and reused afterwards. The copy is written aside and renamed into place, so a second process
    never sees half of it.
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
    import shutil
    import tempfile

    settings = _settings(sys.prefix)
    main = (_SOURCE / "__main__.py").read_bytes()
    version = package_version()
    key = hashlib.sha256("\0".join((sys.prefix, version, settings)).encode() + main).hexdigest()[:16]
    root = _cache_root()
    target = root / f"{version}-{key}"
    if all((target / name).is_file() for name in _FILES):
        return target
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
    try:
        (staging / "PulumiPolicy.yaml").write_text(settings)
        (staging / "__main__.py").write_bytes(main)
        try:
            staging.rename(target)
        except OSError:
            if not all((target / name).is_file() for name in _FILES):
                raise  # not another process's finished copy: a real failure
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def resolve_policy_packs(packs: Sequence[str]) -> list[str]:
    """``packs`` with :data:`POLICY_PACK` replaced by :func:`pack_dir`; paths pass through unchanged."""
    return [str(pack_dir()) if pack == POLICY_PACK else pack for pack in packs]
