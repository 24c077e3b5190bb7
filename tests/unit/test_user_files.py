"""Every file a user names (on a command line, in a stack's settings, in a pull request) is read through the
one guarded reader, ``gitops_infra._files.read_regular_file``: a FIFO would block the read until a writer
came (forever, in CI), and a device's read may never end.

Each case runs the read in a thread given a few seconds: a read that blocks fails the test, then is let go.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from gitops_infra.automation._cluster.kube import Access, kubeconfig_of
from gitops_infra.automation._state.stack_files import load_yaml_file
from gitops_infra.errors import ConfigError

from ..support import REPO_ROOT


def _outcome(read: Callable[[], object], fifo: Path) -> BaseException | None:
    """What ``read`` raised (``None`` if nothing); the test fails if it blocks on ``fifo``."""
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            read()
        except BaseException as exc:  # looked at by the caller
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():
        with open(fifo, "wb"):  # a writer that closes at once: the blocked read ends
            pass
        worker.join(timeout=10)
        pytest.fail(f"the read blocked on the FIFO {fifo}")
    return outcome[0] if outcome else None


def test_a_stack_file_that_is_a_fifo_is_that_file_s_error_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "Pulumi.dev.yaml"
    os.mkfifo(fifo)
    refused = _outcome(lambda: load_yaml_file(fifo, stack="dev"), fifo)
    assert isinstance(refused, ConfigError)
    assert list(refused.problems) == ["Pulumi.dev.yaml: cannot be read: not a regular file"]


_READ_LINKED = """
import resource, sys
from pathlib import Path
from gitops_infra.automation._state.stack_files import load_yaml_file
from gitops_infra.errors import ConfigError

resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # a read without end fails here, not the machine
try:
    load_yaml_file(Path(sys.argv[1]), stack="dev")
except ConfigError as exc:
    print(*exc.problems)
"""


def test_a_stack_file_linked_to_a_device_is_refused_not_read_without_end(tmp_path: Path) -> None:
    # git keeps symbolic links: a pull request can make a stack file one to /dev/zero.
    linked = tmp_path / "Pulumi.dev.yaml"
    linked.symlink_to("/dev/zero")
    done = subprocess.run(
        [sys.executable, "-c", _READ_LINKED, str(linked)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout == "Pulumi.dev.yaml: cannot be read: not a regular file\n", done.stderr[-2000:]


def test_a_kubeconfig_path_that_is_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "kubeconfig"
    os.mkfifo(fifo)
    refused = _outcome(lambda: kubeconfig_of(Access("kubeconfig", None, base=tmp_path)), fifo)
    assert isinstance(refused, ValueError)
    assert str(refused) == "the provider's kubeconfig file cannot be read: not a regular file"


# Reads of paths that are no user's input, each with why: the rule below holds for every other read.
_OWN_FILES = {
    "gitops_infra/automation/_engine/compat.py": "the engine's event log, in the operation's own temp dir",
    "gitops_infra/automation/_state/file_backend.py": "the backend's own lock, checkpoint and history files",
    "gitops_infra/automation/rollback.py": "the owner file of a worktree gitops-infra made",
    "gitops_infra/policy/__init__.py": "the policy pack's files, shipped in the package",
    "gitops_infra/local/_cluster.py": "the local cluster's kubeconfig and CA bundle",
    "gitops_infra/local/_pki.py": "the local cluster's CA it wrote, to issue a certificate from",
    "gitops_infra/local/_fleet_server.py": "the local fleet server's host key and sshd log",
    "gitops_infra/local/_processes.py": "the local harness's own process logs",
    "gitops_infra/local/_github.py": "the local fleet server's request log",
    "gitops_infra/local/_record.py": "the local harness's process record (it checks for a regular file)",
    "gitops_infra/local/_crds.py": "the CRDs setup copied into the toolchain",
    "gitops_infra/local/_argocd.py": "Argo CD's install manifest setup copied into the toolchain",
    "gitops_infra/local/_registry.py": "an image layer it builds in memory (tarfile.open of a buffer)",
    "bench/__main__.py": "the test run's own timing record",
    "bench/fleet_shards.py": "the benchmark's own fixture and outputs",
    "bench/plan_scaling.py": "this checkout's own stack file",
}
_READS = {"read_text", "read_bytes", "open"}


def _reads(path: Path) -> list[int]:
    """The lines of ``path`` that open or read a file by path (``open(...)``, ``x.read_text()``, ...)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        # os.open with write flags and os.fdopen make files; urlopen reads no file.
        if name in _READS and not (isinstance(func, ast.Attribute) and ast.unparse(func.value) == "os"):
            lines.append(node.lineno)
    return lines


def test_every_read_of_a_file_by_path_is_the_guarded_reader_s_or_of_a_file_gitops_infra_made() -> None:
    found = {
        str(path.relative_to(REPO_ROOT)): lines
        for root in ("gitops_infra", "bench")
        for path in sorted((REPO_ROOT / root).rglob("*.py"))
        if (lines := _reads(path))
    }
    unguarded = {path: lines for path, lines in found.items() if path not in _OWN_FILES}
    assert unguarded == {}, "read these through gitops_infra._files.read_regular_file"
    assert sorted(set(_OWN_FILES) - set(found)) == []  # the list names no file that reads nothing now
