"""Session-wide test configuration."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from .support import find_engine


def pytest_configure() -> None:
    # A suite started in the background (`cmd &` ignores SIGINT) or under `nohup` (SIGHUP) would hand
    # those dispositions to every process it starts, and the CLI rightly keeps a signal it was started
    # ignoring: the signal tests would then test the launcher. They run with the default dispositions.
    for signum, default in (
        (signal.SIGINT, signal.default_int_handler),
        (signal.SIGHUP, signal.SIG_DFL),
        (signal.SIGTERM, signal.SIG_DFL),
    ):
        if signal.getsignal(signum) == signal.SIG_IGN:
            signal.signal(signum, default)


def pytest_report_header() -> str:
    # Only initial conftests may add to the header, so the engine tests' one is reported from here.
    engine = find_engine()
    if engine is None:
        return "pulumi engine: not found (run `make setup`)"
    return f"pulumi engine: {engine.pulumi} ({engine.version})"


@pytest.fixture(autouse=True, scope="session")
def no_stored_login(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test sees the developer's own ``pulumi login``: Pulumi, and so gitops-infra, choose the backend
    it stored where nothing else names one, which would send a test that relies on the local default to
    the developer's backend. ``PULUMI_CREDENTIALS_PATH`` is where Pulumi reads the login in place of
    ``PULUMI_HOME`` (``getCredsFilePath``, v3.274.1): an empty directory, for every test and every engine
    it starts. A test of the login itself unsets it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PULUMI_CREDENTIALS_PATH", str(tmp_path_factory.mktemp("no-pulumi-login")))
        yield
