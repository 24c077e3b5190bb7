"""CrossGuard policy packs in the real engine, through ``preview``/``up`` with ``policy_packs``.

The fixture project has no AWS, GitHub or Kubernetes resources, so the real ``gitops_infra/policy`` pack
loads and finds nothing to report. A MANDATORY violation is shown with a test-only pack
(``policy_fixture/``) whose one policy fails a fixture file with forbidden content.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from pulumi import automation as auto

from gitops_infra.automation import StackOptions, history, preview, up
from gitops_infra.errors import OperationFailedError, PolicyViolation, PolicyViolationError

from ..support import REPO_ROOT, python_runtime
from .conftest import FixtureRepo

pytestmark = pytest.mark.engine

GITOPS_INFRA_PACK = REPO_ROOT / "gitops_infra" / "policy"
FIXTURE_PACK = Path(__file__).parent / "policy_fixture"
# Names the test-only pack declares in policy_fixture/__main__.py.
FIXTURE_PACK_NAME = "engine-test-policies"
FIXTURE_POLICY = "no-forbidden-content"
FORBIDDEN = "forbidden"
FILE_TYPE = "pulumi-python:dynamic:Resource"
# The key that marks a secret value in a checkpoint (Pulumi's secret signature).
SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
PROVIDER_TYPE_PREFIX = "pulumi:providers:"


def _file_urn(name: str) -> str:
    return f"urn:pulumi:dev::fixture::{FILE_TYPE}::{name}"


@pytest.fixture
def fixture_pack(tmp_path: Path) -> str:
    """The test-only pack, in a temp dir, set to run on this interpreter's venv.

    The language host runs a policy pack only inside a virtualenv, defaulting to ``venv`` beside it, so
    the copy names ``sys.prefix`` the way the fixture project's ``Pulumi.yaml`` does.
    """
    pack = tmp_path / "policy-pack"
    shutil.copytree(FIXTURE_PACK, pack, ignore=shutil.ignore_patterns("__pycache__"))
    (pack / "PulumiPolicy.yaml").write_text(
        python_runtime(sys.prefix) + "description: test-only policies for the engine tests\nversion: 0.0.1\n"
    )
    return str(pack)


def _recording(repo: FixtureRepo) -> tuple[StackOptions, list[auto.EngineEvent]]:
    events: list[auto.EngineEvent] = []
    return StackOptions(work_dir=repo.root, env=repo.env, on_event=events.append), events


def _policy_events(events: list[auto.EngineEvent]) -> list[auto.PolicyEvent]:
    return [e.policy_event for e in events if e.policy_event is not None]


def _packs_run(events: list[auto.EngineEvent]) -> list[dict[str, str]]:
    """The policy packs each operation's summary says it ran, keyed ``name|local|path``."""
    return [dict(e.summary_event.policy_packs) for e in events if e.summary_event is not None]


def _without_ciphertext(value: Any) -> Any:
    if isinstance(value, dict):
        if SECRET_SIG_KEY in value:
            return "[secret]"
        return {key: _without_ciphertext(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_ciphertext(item) for item in value]
    return value


def _resources_in_state(repo: FixtureRepo) -> dict[str, Any]:
    """Each managed resource in the stack's checkpoint with its inputs and outputs, secrets masked.

    The engine rewrites the checkpoint after every run, even a blocked one: a new manifest timestamp and
    every secret encrypted afresh (a new nonce), so comparing bytes would say nothing. Provider
    resources are left out: the default dynamic provider's recorded inputs are the stack config, and
    the engine records the new config for it before it analyzes (and blocks) the resources.
    """
    checkpoint = json.loads(repo.state_bytes())["checkpoint"]["latest"]
    return {
        r["urn"]: _without_ciphertext({"inputs": r.get("inputs"), "outputs": r.get("outputs")})
        for r in checkpoint["resources"]
        if not r["type"].startswith(PROVIDER_TYPE_PREFIX)
    }


def test_the_gitops_infra_pack_loads_in_the_engine_and_passes_the_fixture(repo: FixtureRepo) -> None:
    options, events = _recording(repo)

    planned = preview("dev", options=options, policy_packs=[str(GITOPS_INFRA_PACK)])
    applied = up("dev", options=options, policy_packs=[str(GITOPS_INFRA_PACK)])

    assert planned.changes == {"create": 3}
    assert applied.changes == {"create": 3}
    assert repo.on_disk() == {"a": "one", "b": "two"}
    # Both operations ran the pack itself (the summary names it, at the version in PulumiPolicy.yaml),
    # and the fixture's files are no concern of any of its policies.
    expected = {f"gitops-infra|local|{GITOPS_INFRA_PACK}": "0.1.0"}
    assert _packs_run(events) == [expected, expected]
    assert _policy_events(events) == []


def test_a_mandatory_violation_blocks_up_and_changes_nothing(repo: FixtureRepo, fixture_pack: str) -> None:
    up("dev", options=repo.options)
    disk_before, state_before = repo.on_disk(), _resources_in_state(repo)
    # One new file that trips the policy; nothing else changes, so no other step could run first.
    repo.configure({"a": "one", "b": "two", "c": FORBIDDEN})
    options, events = _recording(repo)

    with pytest.raises(OperationFailedError) as blocked:
        up("dev", options=options, policy_packs=[fixture_pack])

    assert (blocked.value.stack, blocked.value.operation) == ("dev", "up")
    assert repo.on_disk() == disk_before == {"a": "one", "b": "two"}, "no file may be created or changed"
    assert _resources_in_state(repo) == state_before, "a blocked update must not change any resource"
    (violation,) = _policy_events(events)
    assert (violation.policy_pack_name, violation.policy_name) == (FIXTURE_PACK_NAME, FIXTURE_POLICY)
    assert violation.enforcement_level == "mandatory"
    assert violation.resource_urn == _file_urn("c")
    assert "file 'c' has the content 'forbidden'" in violation.message
    assert [d.result for d in history("dev", options=repo.options)] == ["failed", "succeeded"]

    # preview reports the same violation, and fails as the update would.
    previewed, preview_events = _recording(repo)
    with pytest.raises(OperationFailedError) as rejected:
        preview("dev", options=previewed, policy_packs=[fixture_pack])
    assert rejected.value.operation == "preview"
    assert [(e.policy_name, e.enforcement_level, e.resource_urn) for e in _policy_events(preview_events)] == [
        (FIXTURE_POLICY, "mandatory", _file_urn("c"))
    ]
    assert repo.on_disk() == disk_before


def test_a_blocked_update_error_names_the_violated_policy(repo: FixtureRepo, fixture_pack: str) -> None:
    repo.configure({"a": FORBIDDEN})

    with pytest.raises(PolicyViolationError) as blocked:
        up("dev", options=repo.options, policy_packs=[fixture_pack])

    (violation,) = blocked.value.violations
    assert violation == PolicyViolation(
        pack=FIXTURE_PACK_NAME,
        policy=FIXTURE_POLICY,
        level="mandatory",
        urn=_file_urn("a"),
        message="file 'a' has the content 'forbidden'",
    )
    assert str(blocked.value) == (
        "up on stack 'dev' blocked by 1 mandatory policy violation: "
        f"{FIXTURE_PACK_NAME}/{FIXTURE_POLICY} on {_file_urn('a')}: file 'a' has the content 'forbidden'"
    )
