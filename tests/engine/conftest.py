"""Fixtures for tests that drive the real Pulumi engine.

The engine is the ``pulumi`` CLI plus the Python language host. ``tools/setup.sh`` builds them into
``.tools/pulumi/bin`` (or accepts a suitable ``pulumi`` on PATH). With ``CI`` set, a missing engine fails
the run instead of skipping it, so CI can never pass without exercising the engine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from pulumi import automation as auto

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILT_BIN = REPO_ROOT / ".tools" / "pulumi" / "bin"


@dataclass(frozen=True)
class Engine:
    """The Pulumi CLI the engine tests run, and the directory it lives in."""

    bin_dir: Path
    version: str

    @property
    def command(self) -> auto.PulumiCommand:
        return auto.PulumiCommand(root=str(self.bin_dir.parent))


def _find_engine() -> Engine | None:
    if (BUILT_BIN / "pulumi").is_file():
        bin_dir = BUILT_BIN
    elif ambient := shutil.which("pulumi"):
        bin_dir = Path(ambient).resolve().parent
    else:
        return None
    version = subprocess.run(
        [str(bin_dir / "pulumi"), "version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    return Engine(bin_dir=bin_dir, version=version)


_ENGINE = _find_engine()


def pytest_report_header() -> str:
    if _ENGINE is None:
        return "pulumi engine: not found (run `make setup`)"
    return f"pulumi engine: {_ENGINE.bin_dir / 'pulumi'} ({_ENGINE.version})"


@pytest.fixture(scope="session")
def engine() -> Engine:
    if _ENGINE is None:
        message = "no Pulumi engine: run `make setup` to build it into .tools/pulumi/bin"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return _ENGINE


@pytest.fixture
def engine_env(engine: Engine, tmp_path: Path) -> dict[str, str]:
    """Environment for one engine run: a file backend, passphrase secrets, no plugin downloads."""
    backend = tmp_path / "backend"
    backend.mkdir()
    return {
        "PULUMI_BACKEND_URL": backend.as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": "engine-test-passphrase",
        # Plugin hosts cannot be reached here; the language host still reports the provider packages
        # installed in the venv, so the engine must not try to fetch them.
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_HOME": str(tmp_path / "pulumi-home"),
        # The language host and the dynamic-provider plugin are found beside the CLI.
        "PATH": f"{engine.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    }
