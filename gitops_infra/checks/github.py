"""GitHub: its hosts and API URLs, a GitHub App's IDs and URL, and repository names.

Example::

    assert checks.github_host("https://ghe.example.com/api/v3") == "ghe.example.com"
    assert checks.github_id("123456") == 123456
"""

from __future__ import annotations

import re

from gitops_infra.checks._pattern import pattern_problem

__all__ = [
    "GITHUB_API_URL_PATTERN",
    "GITHUB_HOST",
    "GITHUB_ID_MAX",
    "REPOSITORY_PATTERN",
    "github_api_url_problem",
    "github_app_url_problem",
    "github_host",
    "github_id",
    "github_id_problem",
    "github_ssh_repository",
    "repository_name_problem",
]


GITHUB_HOST = "github.com"
"""The host github.com's repositories are cloned from; its API is ``api.github.com``."""
_HTTPS_DEFAULT_PORT = ":443"


def _https_host(url: str) -> str:
    """The ``host[:port]`` of an ``https://`` URL, lowercase, without the default port."""
    authority = url.removeprefix("https://").split("/", 1)[0].lower()
    return authority.removesuffix(_HTTPS_DEFAULT_PORT)


GITHUB_API_URL_PATTERN = r"^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/\S*)?$"
"""A GitHub API's base URL: ``https://<host>/api/v3`` on an Enterprise Server, a bare ``https://api.<host>``
on github.com and GitHub Enterprise Cloud (``https://api.<name>.ghe.com``)."""
_GITHUB_API_URL = re.compile(GITHUB_API_URL_PATTERN)


def github_api_url_problem(value: object) -> str | None:
    """``None`` for a GitHub API's base URL (``https://ghe.example.com/api/v3``)."""
    return pattern_problem(
        _GITHUB_API_URL,
        value,
        "must be an https:// URL of a GitHub API, such as https://ghe.example.com/api/v3 (Enterprise Server)",
    )


def github_host(api_url: str | None) -> str:
    """The host a GitHub's repositories are cloned from, given its API's base URL (``None``: github.com).

    GitHub Enterprise Server serves its API on its own host, under ``/api/v3``
    (``https://ghe.example.com/api/v3``). github.com and GitHub Enterprise Cloud with data residency
    serve theirs on an ``api.`` host (``api.github.com``, ``api.<name>.ghe.com``), which is how
    fluxcd/pkg/auth's githubapp client tells the two apart (``isGitHubAPIHost``).
    """
    if api_url is None:
        return GITHUB_HOST
    host = _https_host(api_url)
    path = api_url.removeprefix("https://").partition("/")[2]
    if host.startswith("api.") and path.rstrip("/") != "api/v3":
        return host.removeprefix("api.")
    return host


def github_app_url_problem(url: str, api_url: str | None) -> str | None:
    """``None`` when a GitHub App's ``https://`` ``url`` is on the GitHub whose API issues its token.

    Source-controller trades the App's key for a token at the API (``githubAppBaseURL``, else
    github.com's) and presents it to whatever host the url names, unchecked (fluxcd/pkg/auth
    githubapp): on another host every fetch fails, and a token of the one GitHub is sent to the other.
    """
    expected = github_host(api_url)
    if not url.startswith("https://") or _https_host(url) == expected:
        return None
    issuer = "the API at the App's base URL" if api_url else "github.com's API: no base URL is set"
    return (
        f"must be on {expected} (https://{expected}/<owner>/<repository>), the GitHub whose API issues "
        f"the App's token ({issuer}); Flux presents that token to the url's host"
    )


GITHUB_ID_MAX = 2**63 - 1
"""The largest ID source-controller reads (``strconv.ParseInt(..., 10, 64)`` in fluxcd/pkg/auth)."""


def github_id(value: object) -> int | None:
    """A GitHub App's or installation's ID as a number: ``123456``, or the digit string ``"123456"``
    (the form pulumi-github's own ``github:appAuth`` takes); ``None`` for anything else."""
    # 19 digits at most: longer is out of range, and int() refuses a string of over 4300 (CVE-2020-10735).
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        value = int(value)
    # bool is an int to Python, and a float is not a whole number even when it looks like one.
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= GITHUB_ID_MAX:
        return value
    return None


def github_id_problem(value: object) -> str | None:
    """``None`` for a GitHub App's or installation's ID (``123456`` or ``"123456"``)."""
    if github_id(value) is not None:
        return None
    return (
        "must be a positive whole number such as 123456, or its digits as a string "
        "(GitHub shows it on the App's settings page)"
    )


REPOSITORY_PATTERN = r"^[A-Za-z0-9_.-]{1,100}$"
"""A GitHub repository's name, as GitHub allows it: ASCII letters, digits, ``.``, ``-`` and ``_``."""
_REPOSITORY = re.compile(REPOSITORY_PATTERN)


def repository_name_problem(value: object) -> str | None:
    """``None`` for a repository's name on GitHub, without its owner (``fleet``)."""
    if isinstance(value, str) and "/" in value:
        return "must be a repository name, not owner/name"
    return pattern_problem(_REPOSITORY, value, "must be a repository name")


def github_ssh_repository(url: str) -> tuple[str, str] | None:
    """``(owner, repository)`` of an ``ssh://`` URL of a repository on github.com (``.git`` or not), the
    only place a generated deploy key is registered; ``None`` for any other URL."""
    prefix = f"ssh://git@{GITHUB_HOST}/"
    parts = url.removeprefix(prefix).removesuffix(".git").split("/") if url.startswith(prefix) else []
    if len(parts) != 2 or repository_name_problem(parts[1]) is not None or not parts[0]:
        return None
    return parts[0], parts[1]
