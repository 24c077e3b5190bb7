"""The backend a stack's state is on, chosen as Pulumi chooses it.

Pulumi takes ``PULUMI_BACKEND_URL`` when it is set and not empty, else the project's own ``backend.url``
in ``Pulumi.yaml``, else the backend ``pulumi login`` stored, the ``current`` of its
``credentials.json`` (``GetCurrentCloudURLWithSource`` in ``pkg/workspace/creds.go``, v3.274.1), else the
service ``PULUMI_API`` names (``prepareBackend`` in ``pkg/cmd/pulumi/backend/login_manager.go``). We take
the same four, in the same order, with the caller's ``StackOptions.backend_url`` above them (an explicit
argument, as the variable is for one run). Only where none names a backend does the local default come
in, ``<project>/.pulumi-state``, in place of Pulumi's own (Pulumi Cloud): gitops-infra promises to work
with no account. (A credential helper, which Pulumi may ask for a backend then, is not run here.)

The stored login is read as Pulumi reads it (``readCredentialsFile`` in sdk/go/common/workspace/creds.go,
v3.274.1): ``credentials.json`` in ``PULUMI_CREDENTIALS_PATH``, else ``PULUMI_HOME``, else ``~/.pulumi``
(the home directory of the user's passwd entry); under the shared lock its writer takes; a missing or
empty file is no login. Only its ``current`` is kept: the file holds access tokens, which are neither
kept nor shown, and no error quotes it. A file Pulumi could not read is a ``ConfigError`` naming it, as
is one Pulumi encrypted (its credential store), whose ``current`` cannot be read here: where we cannot
tell which backend Pulumi would choose, we choose none.

The URL chosen is exported to the engine as ``PULUMI_BACKEND_URL``, so a rollback's worktree of an older
commit (whose ``Pulumi.yaml`` may name no backend, or another) runs on the same backend. A relative
``file://`` path is made absolute against the project, as the engine makes it against its working
directory, which is the project's (``massageBlobPath`` in ``pkg/backend/diy/backend.go``): so the lock
and history files read here are the engine's, wherever gitops-infra runs from.
"""

from __future__ import annotations

import json
import os
import pwd
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from ..._files import FileRefused, read_regular_file
from ...errors import ConfigError
from ...redaction import safe_url
from .project import Project

__all__ = [
    "BACKEND_VAR",
    "DEFAULT_STATE_DIR",
    "Backend",
    "BackendSource",
    "choose_backend",
    "credentials_file",
]

DEFAULT_STATE_DIR = ".pulumi-state"
"""The local file backend's directory inside the project, used when nothing names a backend."""
BACKEND_VAR = "PULUMI_BACKEND_URL"
HOME_VAR = "PULUMI_HOME"
API_VAR = "PULUMI_API"
CREDENTIALS_PATH_VAR = "PULUMI_CREDENTIALS_PATH"
"""A directory that holds ``credentials.json`` in place of ``PULUMI_HOME`` (Pulumi's own tests use it)."""
CREDENTIALS_FILE = "credentials.json"
MAX_CREDENTIALS_BYTES = 16 * 1024 * 1024
"""Far beyond any login's file: a larger one is not Pulumi's."""
LOCK_WAIT_SECONDS = 10.0
"""How long a ``pulumi login`` writing the file may hold its lock before we give up reading it."""
_FILE = "file://"
# secureStoreEnvelope's marker (sdk/go/common/util/securestore/envelope.go, v3.274.1): an encrypted file.
_ENVELOPE = "$pulumiSecureStore"
_KEPT = {"current": "current", _ENVELOPE.lower(): _ENVELOPE}


class BackendSource(Enum):
    """Where the backend's URL came from, as an error names it."""

    OPTIONS = "StackOptions.backend_url"
    ENV = "PULUMI_BACKEND_URL"
    PROJECT = "backend.url in the project's settings"
    LOGIN = "pulumi login"
    API = "PULUMI_API"
    DEFAULT = (
        "gitops-infra's default, as neither PULUMI_BACKEND_URL, nor backend.url in Pulumi.yaml, nor a "
        "`pulumi login`, nor PULUMI_API names one"
    )


@dataclass(frozen=True)
class Backend:
    """The backend a stack's state is on, and why that one."""

    url: str
    source: BackendSource
    pinned: str | None = None
    """The project's own ``backend.url``, also when something above it won."""
    login: Path | None = None
    """The ``credentials.json`` the URL was read from, when ``source`` is ``LOGIN``."""

    def where(self) -> str:
        """The URL (without a password) and its source, for an error."""
        said = f"{safe_url(self.url)} ({self.source.value}"
        if self.login is not None:
            said += f", stored in {self.login}"
        if self.pinned is not None and self.source is not BackendSource.PROJECT and self.pinned != self.url:
            said += f", in place of the project's backend.url {safe_url(self.pinned)}"
        return said + ")"


def _project_url(project: Project) -> str | None:
    """``backend.url`` in the project's settings; ``None`` when absent or empty, as Pulumi reads it."""
    section = project.settings.get("backend")
    where = f"{project.settings_file.name}.backend"
    if section is None:
        return None
    if not isinstance(section, Mapping):
        raise ConfigError([f"{where}: must be a mapping with a url (the project's state backend)"])
    url = section.get("url")
    if url is None or url == "":
        return None
    if not isinstance(url, str):
        raise ConfigError([f"{where}.url: must be a string, the backend's URL (file://, s3://, https://...)"])
    return url


def _home() -> Path:
    # Pulumi expands `~` with os/user's Current().HomeDir, the passwd entry, not $HOME.
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        return Path.home()


def _variable(env: Mapping[str, str], name: str) -> str:
    """``name`` as the engine gets it (``env`` over this process's environment); empty when unset."""
    return env[name] if name in env else os.environ.get(name, "")


def credentials_file(env: Mapping[str, str]) -> Path:
    """Where ``pulumi login`` keeps the current backend (``getCredsFilePath``, ``pulumihome.Dir``):
    ``credentials.json`` in ``PULUMI_CREDENTIALS_PATH``, else ``PULUMI_HOME``, else ``~/.pulumi``; an
    empty variable is unset."""
    directory = _variable(env, CREDENTIALS_PATH_VAR) or _variable(env, HOME_VAR)
    return (Path(directory) if directory else _home() / ".pulumi") / CREDENTIALS_FILE


def _current_only(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of the file with its ``current`` and the envelope's marker, and nothing else: no token
    is kept. Go's decoder matches a field's name in any case, and the last key matching it wins."""
    kept: dict[str, Any] = {}
    for key, value in pairs:
        if key.lower() in _KEPT:
            kept[_KEPT[key.lower()]] = value
    return kept


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _stored_login(env: Mapping[str, str]) -> tuple[str, Path] | None:
    """The ``current`` backend of the stored login and its file, or ``None`` when there is none."""
    path = credentials_file(env)

    def refuse(problem: str) -> ConfigError:
        return ConfigError(
            [
                f"{path}: {problem}, so the backend `pulumi login` stored cannot be read; fix it, run "
                "`pulumi login` again, or name the backend with PULUMI_BACKEND_URL or backend.url in "
                "Pulumi.yaml"
            ]
        )

    try:
        raw = read_regular_file(path, MAX_CREDENTIALS_BYTES, shared_lock=LOCK_WAIT_SECONDS)
    except FileNotFoundError:
        return None
    except FileRefused as exc:
        raise refuse(f"cannot be read ({exc})") from None
    except OSError as exc:
        raise refuse(f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    if not raw:  # Pulumi takes an empty file for none: an interrupted write's (readCredentialsFile)
        return None
    try:
        # Go's decoder puts invalid UTF-8 in as U+FFFD; the tokens are dropped as each object is read.
        document = json.loads(
            raw.decode("utf-8", errors="replace"),
            object_pairs_hook=_current_only,
            parse_constant=_refuse_constant,
        )
    except json.JSONDecodeError as exc:
        raise refuse(f"is not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    except (ValueError, RecursionError):
        raise refuse("is not valid JSON") from None
    if document is None:
        return None
    if not isinstance(document, dict):
        raise refuse("is not a JSON object")
    marker = document.get(_ENVELOPE)
    if isinstance(marker, int) and not isinstance(marker, bool):
        raise refuse("is encrypted by Pulumi's credential store, which only Pulumi can open")
    current = document.get("current")
    if current is None or current == "":
        return None
    if not isinstance(current, str):
        raise refuse("holds a current backend that is not text")
    return current, path


def _absolute(url: str, project_dir: Path) -> str:
    """A ``file://`` URL with its path absolute, as the engine running in ``project_dir`` makes it.

    ``massageBlobPath`` takes everything after ``file://`` and before ``?`` as the path (a host part
    included), expands a leading ``~`` as ``~/``, and resolves the rest against the working directory.
    Other URLs are returned as they are.
    """
    if not url.startswith(_FILE):
        return url
    path, question, query = url.removeprefix(_FILE).partition("?")
    if path.startswith("~"):
        path = str(_home()) if path == "~" else str(_home() / path[2:])
    absolute = os.path.normpath(project_dir / path)
    return f"{_FILE}{absolute}{question}{query}"


def choose_backend(project: Project, env: Mapping[str, str], explicit: str | None = None) -> Backend:
    """The backend of ``project``'s stacks: ``explicit``, else ``PULUMI_BACKEND_URL`` (``env`` over this
    process's environment, as the engine gets them), else the project's ``backend.url``, else the one
    ``pulumi login`` stored, else ``PULUMI_API``, else ``<project>/.pulumi-state``. ``ConfigError`` when
    ``backend`` in ``Pulumi.yaml`` is malformed, or the stored login, needed, cannot be read.

    Example::

        backend = choose_backend(Project.find(), os.environ)
        print(backend.where())   # s3://team-state (backend.url in the project's settings)
    """
    pinned = _project_url(project)
    variable = _variable(env, BACKEND_VAR)
    login: Path | None = None
    if explicit:
        url, source = explicit, BackendSource.OPTIONS
    elif variable:
        url, source = variable, BackendSource.ENV
    elif pinned is not None:
        url, source = pinned, BackendSource.PROJECT
    elif stored := _stored_login(env):
        (url, login), source = stored, BackendSource.LOGIN
    elif service := _variable(env, API_VAR):
        url, source = service, BackendSource.API
    else:
        url, source = (project.path / DEFAULT_STATE_DIR).as_uri(), BackendSource.DEFAULT
    return Backend(url=_absolute(url, project.path), source=source, pinned=pinned, login=login)
