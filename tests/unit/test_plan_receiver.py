"""prod's offline plan shows instant sync (the Receiver, its token Secret, the GitHub webhook), and the
Receiver's token nowhere: in no output format, and not the webhook path derived from it either."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from gitops_infra import checks
from gitops_infra.automation import SECRET
from gitops_infra.cli import EXIT_OK, main
from gitops_infra.components.flux import receiver

from ..support import REPO_ROOT, stack_project

# Made up for the test: the program's own token is random, so it is pinned to this to be looked for.
TOKEN = "receiver-token-testonly-5f3a9c0e7d21"


@pytest.fixture(autouse=True)
def nothing_but_the_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No passphrase, no engine on PATH, no backend: what a fork's pull request job has."""
    for name in ("PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE", "PULUMI_BACKEND_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(receiver, "_new_token", lambda: TOKEN)


def _plan(*args: str) -> Result:
    return CliRunner().invoke(main, ["plan", "prod", "--cwd", str(REPO_ROOT), *args])


def test_prods_plan_shows_the_receiver_its_secret_and_the_webhook() -> None:
    result = _plan()

    assert result.exit_code == EXIT_OK, result.output
    lines = result.stdout.splitlines()
    assert any(
        "kubernetes:notification.toolkit.fluxcd.io/v1:Receiver  gitops-prod-flux-receiver" in line
        for line in lines
    )
    assert any(
        "kubernetes:core/v1:SecretPatch  gitops-prod-flux-receiver-token  "
        'type="Opaque"  stringData="[secret]"' in line
        for line in lines
    )
    assert any(
        "github:index/repositoryWebhook:RepositoryWebhook  gitops-prod-receiver-webhook  "
        'repository="fleet"  events=["push"]' in line
        for line in lines
    )


def test_prods_plan_json_holds_the_webhook_with_its_secret_and_url_redacted() -> None:
    result = _plan("--json")

    assert result.exit_code == EXIT_OK, result.output
    resources = {r["name"]: r for r in json.loads(result.stdout)["resources"]}
    webhook = resources["gitops-prod-receiver-webhook"]["inputs"]
    assert webhook["configuration"] == {
        "contentType": "json",
        "insecureSsl": False,
        "secret": SECRET,
        "url": SECRET,
    }
    receiver_spec = resources["gitops-prod-flux-receiver"]["inputs"]["spec"]
    assert receiver_spec["type"] == "github" and receiver_spec["events"] == ["push", "ping"]


def test_the_token_appears_in_no_output() -> None:
    path = checks.receiver_webhook_path(TOKEN, "flux-system", "flux-system")
    outputs = [_plan(*form) for form in ((), ("--json",), ("--format", "markdown"))]

    assert [result.exit_code for result in outputs] == [EXIT_OK] * 3, outputs[0].output
    for result in outputs:
        text = result.stdout + result.stderr
        assert "gitops-prod-flux-receiver" in text  # the plan does show the Receiver
        assert TOKEN not in text
        assert path.removeprefix("/hook/") not in text


def test_webhook_false_plans_the_receiver_and_nothing_on_github(tmp_path: Path) -> None:
    stack_project(tmp_path)
    config = yaml.safe_load((REPO_ROOT / "Pulumi.local.yaml").read_text())["config"]
    config["gitops-infra:flux"]["receiver"] = {"webhook": False}
    (tmp_path / "Pulumi.test.yaml").write_text(yaml.safe_dump({"config": config}))

    result = CliRunner().invoke(main, ["plan", "test", "--cwd", str(tmp_path), "--json"])

    assert result.exit_code == EXIT_OK, result.output
    types = [r["type"] for r in json.loads(result.stdout)["resources"]]
    assert "kubernetes:notification.toolkit.fluxcd.io/v1:Receiver" in types
    assert not [t for t in types if t.startswith(("github:", "pulumi:providers:github"))]
