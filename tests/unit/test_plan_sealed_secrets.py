"""The offline plan of a stack with ``secrets.sealedSecrets`` on: the keys, hidden, and the controller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gitops_infra.automation import SECRET
from gitops_infra.cli import EXIT_OK, main

from ..support import REPO_ROOT, stack_project


@pytest.fixture(autouse=True)
def nothing_but_the_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No passphrase, no engine on PATH, no backend: what a fork's pull request job has."""
    for name in ("PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE", "PULUMI_BACKEND_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))


def test_the_plan_shows_the_keys_as_secrets_the_controller_and_the_cert_output(tmp_path: Path) -> None:
    config = yaml.safe_load((REPO_ROOT / "Pulumi.dev.yaml").read_text())["config"]
    config["gitops-infra:secrets"] = {"sealedSecrets": {"enabled": True, "rotations": ["", "2027-01"]}}
    stack_project(tmp_path)
    (tmp_path / "Pulumi.test.yaml").write_text(yaml.safe_dump({"config": config}))
    result = CliRunner().invoke(main, ["plan", "test", "--cwd", str(tmp_path), "--json"])
    assert result.exit_code == EXIT_OK, result.output
    plan = json.loads(result.stdout)
    by_type: dict[str, list[dict[str, object]]] = {}
    for resource in plan["resources"]:
        by_type.setdefault(resource["type"], []).append(resource)
    (component,) = by_type["gitops-infra:index:SealedSecrets"]
    assert component["name"] == "gitops-dev-sealed-secrets"
    assert len(by_type["tls:index/privateKey:PrivateKey"]) >= 2  # the deploy key's too
    keys = [r for r in by_type["kubernetes:core/v1:Secret"] if r["parent"] == component["urn"]]
    assert len(keys) == 2 and all(r["inputs"]["stringData"] == SECRET for r in keys)
    releases = [r for r in by_type["kubernetes:helm.sh/v3:Release"] if r["parent"] == component["urn"]]
    assert [r["inputs"]["chart"] for r in releases] == ["sealed-secrets"]
    assert "sealedSecretsCert" in plan["outputs"]


@pytest.mark.parametrize(
    "held",
    [
        pytest.param(
            {"gitops-infra:sealedSecretsKeys": {"secure": "v1:c2FsdA==:Y2lwaGVydGV4dA=="}}, id="encrypted"
        ),
        pytest.param({}, id="not in the file"),
    ],
)
def test_the_plan_of_keys_held_in_the_config_plans_them_as_secrets(
    tmp_path: Path, held: dict[str, object]
) -> None:
    """``keySource: config``: the plan cannot decrypt ``sealedSecretsKeys`` (or the pull request's file does
    not hold it), so each pair is the placeholder, as any secret the plan cannot read."""
    config = yaml.safe_load((REPO_ROOT / "Pulumi.dev.yaml").read_text())["config"]
    sealed = {"enabled": True, "keySource": "config", "rotations": ["", "2027-01"]}
    config["gitops-infra:secrets"] = {"sealedSecrets": sealed}
    stack_project(tmp_path)
    (tmp_path / "Pulumi.test.yaml").write_text(yaml.safe_dump({"config": {**config, **held}}))
    result = CliRunner().invoke(main, ["plan", "test", "--cwd", str(tmp_path), "--json"])
    assert result.exit_code == EXIT_OK, result.output
    plan = json.loads(result.stdout)
    assert not [
        r
        for r in plan["resources"]
        if r["type"] == "tls:index/privateKey:PrivateKey" and "sealed" in r["name"]
    ]
    keys = [
        r
        for r in plan["resources"]
        if r["type"] == "kubernetes:core/v1:Secret" and "sealed-secrets-key" in r["name"]
    ]
    assert len(keys) == 2 and all(r["inputs"]["stringData"] == SECRET for r in keys)
