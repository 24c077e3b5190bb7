"""Which stacks `destroy` treats as prod: the environment read as Pulumi reads it, failing closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitops_infra.automation import StackOptions
from gitops_infra.automation._target import StackTarget
from gitops_infra.automation.teardown import prod_environment

from ..support import fake_engine, write_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fake_engine(write_project(tmp_path, "p"))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "p")
    return tmp_path


PROD = "environment 'prod'"
UNREADABLE = "its environment cannot be read"


@pytest.mark.parametrize(
    ("stack_file", "expected"),
    [
        pytest.param("config:\n  p:environment: {name: prod}\n", PROD, id="the namespaced mapping"),
        pytest.param("config:\n  p:environment: {name: dev}\n", None, id="a dev mapping"),
        # What slipped past: Pulumi reads a bare key in the project's namespace.
        pytest.param("config:\n  environment: {name: prod}\n", PROD, id="a bare key"),
        # ... and `pulumi config set environment '{"name":"prod"}'` (no --path) writes JSON text.
        pytest.param('config:\n  p:environment: \'{"name": "prod"}\'\n', PROD, id="JSON text"),
        pytest.param(
            'config:\n  environment: \'{"name": "Production"}\'\n', "environment 'Production'", id="bare JSON"
        ),
        pytest.param('config:\n  p:environment: \'{"name": "dev"}\'\n', None, id="dev JSON text"),
        # Both spellings at once: either one naming prod is enough.
        pytest.param("config:\n  p:environment: {name: dev}\n  environment: {name: prod}\n", PROD, id="both"),
        # There, but unreadable: prod (fail closed).
        pytest.param("config:\n  p:environment: 'prod'\n", UNREADABLE, id="text, not JSON"),
        pytest.param("config:\n  p:environment: '[1, 2]'\n", UNREADABLE, id="JSON, not a mapping"),
        pytest.param("config:\n  p:environment:\n    secure: AAABAB==\n", UNREADABLE, id="a secret"),
        pytest.param("config:\n  p:environment: {name: [prod]}\n", UNREADABLE, id="a name that is no text"),
        pytest.param("config: [p:environment]\n", UNREADABLE, id="a config that is no mapping"),
        # Not there at all: the stack's own name decides (dev here).
        pytest.param("config: {}\n", None, id="absent"),
        pytest.param("config:\n  p:environment: {baseDomain: x}\n", None, id="no name"),
    ],
)
def test_prod_is_read_as_pulumi_reads_the_environment(
    project: Path, stack_file: str, expected: str | None
) -> None:
    (project / "Pulumi.dev.yaml").write_text(stack_file)
    reason = prod_environment(StackTarget.resolve("dev", StackOptions(work_dir=project)))
    assert reason == expected if expected != UNREADABLE else (reason or "").startswith(UNREADABLE)


def test_the_projects_own_default_counts_and_the_stack_name_too(project: Path) -> None:
    settings = (project / "Pulumi.yaml").read_text()
    (project / "Pulumi.yaml").write_text(settings + "config:\n  p:environment:\n    value: {name: prod}\n")
    (project / "Pulumi.dev.yaml").write_text("config: {}\n")
    assert prod_environment(StackTarget.resolve("dev", StackOptions(work_dir=project))) == PROD
    (project / "Pulumi.dev.yaml").write_text("config:\n  p:environment: {name: dev}\n")  # the stack's wins
    assert prod_environment(StackTarget.resolve("dev", StackOptions(work_dir=project))) is None
    (project / "Pulumi.yaml").write_text(settings)
    (project / "Pulumi.production.yaml").write_text("config: {}\n")
    target = StackTarget.resolve("production", StackOptions(work_dir=project))
    assert prod_environment(target) == "stack name 'production'"
