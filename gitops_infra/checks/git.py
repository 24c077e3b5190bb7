"""Git: the URLs Flux clones, branches, paths inside the repository and SSH host keys.

Example::

    assert checks.git_url_problem("ssh://git@git.example.com/org/fleet.git") is None
    assert checks.ssh_url_host("ssh://git@git.example.com:2222/org/fleet") == ("git.example.com", 2222)
"""

from __future__ import annotations

import re

from gitops_infra.checks._pattern import pattern_problem
from gitops_infra.defaults import DEFAULT_BRANCH

__all__ = [
    "BRANCH_PATTERN",
    "DEFAULT_BRANCH",
    "DEFAULT_SSH_PORT",
    "GIT_PROVIDERS",
    "HTTPS_URL_PATTERN",
    "SSH_URL_PATTERN",
    "branch_problem",
    "git_auth_url_problem",
    "git_provider_problem",
    "git_url_problem",
    "https_url_problem",
    "known_hosts_for_url_problem",
    "known_hosts_problem",
    "relative_path_problem",
    "ssh_url_host",
    "ssh_url_problem",
]


SSH_URL_PATTERN = r"^ssh://([A-Za-z0-9._-]+@)?[A-Za-z0-9.-]+(:[0-9]{1,5})?/\S+$"
"""``ssh://[user@]host[:port]/path``: how a GitRepository names a repository it clones with an SSH key
(its CRD takes only ``http``, ``https`` and ``ssh`` URLs, so no scp-like ``git@host:path``)."""
_SSH_URL = re.compile(SSH_URL_PATTERN)
BRANCH_PATTERN = r"^[^\s~^:?*\[\\]{1,255}$"
"""A branch name of at most 255 characters, none of them whitespace or one of ``~ ^ : ? * [ \\``, which
``git check-ref-format`` refuses. git refuses a few more forms (``a..b``, ``name.lock``): Flux says so."""
_BRANCH = re.compile(BRANCH_PATTERN)


def ssh_url_problem(value: object) -> str | None:
    """``None`` for an ``ssh://`` URL with a path (``ssh://git@git.example.com/org/fleet.git``)."""
    return pattern_problem(
        _SSH_URL, value, "must be an ssh:// URL, such as ssh://git@git.example.com/org/fleet.git"
    )


HTTPS_URL_PATTERN = r"^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?/\S+$"
"""``https://host[:port]/path``: how a GitRepository names a repository it clones as a GitHub App."""
_HTTPS_URL = re.compile(HTTPS_URL_PATTERN)


def https_url_problem(value: object) -> str | None:
    """``None`` for an ``https://`` URL with a path (``https://github.com/org/fleet``)."""
    return pattern_problem(_HTTPS_URL, value, "must be an https:// URL, such as https://github.com/org/fleet")


def git_url_problem(value: object) -> str | None:
    """``None`` for a URL a GitRepository clones: ``ssh://`` (a deploy key) or ``https://`` (a GitHub App)."""
    if ssh_url_problem(value) is None or https_url_problem(value) is None:
        return None
    return (
        "must be an ssh:// URL such as ssh://git@git.example.com/org/fleet.git, or an https:// URL "
        "such as https://github.com/org/fleet for GitHub App auth"
    )


def git_auth_url_problem(url: str, github_app: bool) -> str | None:
    """``None`` when ``url``'s scheme is the one its auth speaks: SSH for a deploy key, HTTPS for an App.

    Flux would take either and fail at the first fetch (a key offered over HTTPS, an App token over SSH).
    """
    if github_app and not url.startswith("https://"):
        return (
            "GitHub App auth fetches over HTTPS: use https://github.com/<owner>/<repository> "
            "(an ssh:// URL needs a deploy key)"
        )
    if not github_app and not url.startswith("ssh://"):
        return (
            "a deploy key authenticates over SSH: use ssh://git@<host>/<owner>/<repository>, or "
            "GitHub App auth for an https:// URL"
        )
    return None


GIT_PROVIDERS = ("github",)
"""The GitRepository ``spec.provider`` values the platform writes (``generic``, Flux's default, is none)."""


def git_provider_problem(value: object) -> str | None:
    """``None`` for a GitRepository provider the platform sets up the auth of."""
    return None if value in GIT_PROVIDERS else f"must be one of {', '.join(GIT_PROVIDERS)}, or unset"


def branch_problem(value: object) -> str | None:
    """``None`` for a branch name git and GitHub accept (``main``, ``release/v1``)."""
    hint = "must be a branch name: at most 255 characters, no whitespace and none of ~ ^ : ? * [ \\"
    return pattern_problem(_BRANCH, value, hint)


def relative_path_problem(value: object) -> str | None:
    """``None`` for a path inside a repository: relative, no ``..`` step, no whitespace."""
    if (
        isinstance(value, str)
        and value
        and not value.startswith("/")
        and ".." not in value.split("/")
        and not re.search(r"\s", value)
    ):
        return None
    return "must be a relative path inside the repository, without '..' or whitespace"


DEFAULT_SSH_PORT = 22


def ssh_url_host(url: str) -> tuple[str, int | None]:
    """The host of an ``ssh://[user@]host[:port]/path`` URL, and its port when it names one."""
    authority = url.removeprefix("ssh://").split("/", 1)[0].rpartition("@")[2]
    host, _, port = authority.partition(":")
    return host, int(port) if port.isdigit() else None


def known_hosts_for_url_problem(known_hosts: str, url: str) -> str | None:
    """``None`` when ``known_hosts`` can vouch for the host ``url`` names, else what was expected.

    On a port other than 22, ssh looks the host key up under ``[host]:port``, so a line naming the bare
    host never matches and every clone fails host key checking. A hashed line (``|1|...``) cannot be read
    here, so it is taken on trust.
    """
    host, port = ssh_url_host(url)
    if port is None or port == DEFAULT_SSH_PORT:
        return None
    wanted = f"[{host}]:{port}"
    for line in known_hosts.splitlines():
        fields = line.split()
        if fields and fields[0].startswith("@"):  # a marker (@cert-authority, @revoked) comes first
            fields = fields[1:]
        if not fields or fields[0].startswith("#"):
            continue
        if fields[0].startswith("|1|") or wanted in fields[0].split(","):
            return None
    return (
        f"must name the host as {wanted}: the url's port is {port}, and ssh looks a host key up under "
        "[host]:port on a port other than 22, so a line for the bare host never matches"
    )


def known_hosts_problem(value: object) -> str | None:
    """``None`` for ``known_hosts`` text that holds something: with none, every clone fails host checking."""
    if isinstance(value, str) and value.strip():
        return None
    return "must not be empty: the git host's SSH host keys, one per line in known_hosts form"
