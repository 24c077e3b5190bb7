"""The GitOps layer's judgement of what Flux reports, its report shapes, and the exit codes built on it.

The objects here are what Flux's controllers write (as the cluster tests read them back); the cluster
tier runs the same code against the real controllers.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from base64 import b64encode
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gitops_infra.automation import (
    DriftReport,
    FleetDrift,
    GitOpsReport,
    GitOpsSource,
    GitOpsSync,
    Layer,
    StackDrift,
    merge_drift_reports,
)
from gitops_infra.automation._cluster.flux_apis import GIT_REPOSITORY, HELM_RELEASE, KUSTOMIZATION, SYNC_KINDS
from gitops_infra.automation._cluster.gitops import _made, gitops_of, gitops_report
from gitops_infra.automation._cluster.kube import (
    kubeconfig_of,
    materialised,
    provider_access,
    served_version,
    version_priority,
    why,
)
from gitops_infra.automation._engine.compat import SECRET_SIG, SECRET_SIG_KEY
from gitops_infra.automation.results import FluxStatus, to_jsonable
from gitops_infra.cli import main
from gitops_infra.cli._main import drift_exit, fleet_drift_exit
from gitops_infra.errors import ArgumentError
from gitops_infra.local import DeployKeyPair

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
REVISION = "main@sha1:" + "a" * 40
NEWER = "main@sha1:" + "b" * 40
SOURCE_TYPE = "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository"
SYNC_TYPE = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"
PROVIDER_URN = "urn:pulumi:dev::p::pulumi:providers:kubernetes::k8s"


def _at(delta: timedelta) -> str:
    return (NOW - delta).isoformat().replace("+00:00", "Z")


def _condition(status: str, reason: str = "Succeeded", message: str = "ok") -> dict[str, Any]:
    return {"type": "Ready", "status": status, "reason": reason, "message": message}


def _source(
    *, ready: str = "True", generation: int = 1, observed: int = 1, written: timedelta = timedelta(hours=1)
) -> dict[str, Any]:
    return {
        "metadata": {
            "namespace": "flux-system",
            "name": "flux-system",
            "generation": generation,
            "managedFields": [
                {"manager": "pulumi", "time": _at(written)},
                {"manager": "source-controller", "subresource": "status", "time": _at(timedelta(0))},
            ],
        },
        "spec": {"interval": "1m"},
        "status": {
            "observedGeneration": observed,
            "conditions": [_condition(ready)],
            "artifact": {"revision": REVISION, "lastUpdateTime": _at(timedelta(days=3))},
        },
    }


def _sync(
    *, ready: str = "True", applied: str = REVISION, suspend: bool = False, name: str = "flux-system"
) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "flux-system", "name": name, "generation": 1},
        "spec": {"suspend": suspend, "sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
        "status": {
            "observedGeneration": 1,
            "conditions": [_condition(ready, "ReconciliationSucceeded", f"Applied revision: {applied}")],
            "lastAppliedRevision": applied,
        },
    }


def _state(kubeconfig: Any = "apiVersion: v1\nkind: Config\n") -> dict[str, Any]:
    provider_ref = f"{PROVIDER_URN}::0000"
    return {
        "resources": [
            {
                "urn": PROVIDER_URN,
                "type": "pulumi:providers:kubernetes",
                "inputs": {"kubeconfig": kubeconfig},
            },
            {
                "urn": "urn:pulumi:dev::p::x::repo",
                "type": SOURCE_TYPE,
                "provider": provider_ref,
                "outputs": {"metadata": {"namespace": "flux-system", "name": "flux-system"}},
            },
            {
                "urn": "urn:pulumi:dev::p::x::sync",
                "type": SYNC_TYPE,
                "provider": provider_ref,
                "outputs": {
                    "metadata": {"namespace": "flux-system", "name": "flux-system"},
                    "spec": {"sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
                },
            },
            {"urn": "urn:pulumi:dev::p::x::gone", "type": SYNC_TYPE, "delete": True, "outputs": {}},
        ]
    }


def _report(
    source: dict[str, Any] | None, sync: dict[str, Any] | None, others: list[tuple[str, Any]] | None = None
) -> GitOpsReport:
    made = [m for m in (_made(r) for r in _state()["resources"]) if m is not None]
    read = {
        ("GitRepository", "flux-system", "flux-system"): source,
        ("Kustomization", "flux-system", "flux-system"): sync,
    }
    return gitops_report(made, read, others or [], NOW)


# -- judging Flux's objects ---------------------------------------------------------------------------------


def test_all_ready_at_the_source_revision_is_healthy_with_no_problem() -> None:
    report = _report(_source(), _sync())
    assert report.healthy and report.problems == ()
    (source,) = report.sources
    assert source.ready is True and source.revision == REVISION and source.stale is False
    assert source.fetched_at == NOW - timedelta(days=3)  # a quiet repository: old, and not stale
    (sync,) = report.syncs
    assert sync.applied_revision == sync.source_revision == REVISION and not sync.lag


def test_a_suspended_kustomization_is_named_as_suspended() -> None:
    report = _report(_source(), _sync(suspend=True))
    assert report.problems == ("Kustomization flux-system/flux-system is suspended",)


def test_a_kustomization_that_failed_is_not_ready_in_fluxs_words_and_lags() -> None:
    failed = _sync(ready="False", applied=REVISION)
    failed["status"]["conditions"] = [_condition("False", "BuildFailed", "kustomize build failed: boom")]
    source = _source()
    source["status"]["artifact"]["revision"] = NEWER
    report = _report(source, failed)
    assert report.problems == (
        "Kustomization flux-system/flux-system is not Ready (BuildFailed): kustomize build failed: boom",
        f"Kustomization flux-system/flux-system lags its source: applied {REVISION}, the source is at "
        f"{NEWER}",
    )


def test_a_source_behind_its_spec_is_not_ready_yet_and_stale_only_after_three_intervals() -> None:
    recent = _report(_source(generation=2, observed=1, written=timedelta(minutes=2)), _sync())
    assert recent.sources[0].ready is None and recent.sources[0].stale is False
    assert recent.problems == (
        "GitRepository flux-system/flux-system is not Ready yet (Progressing): generation 2 is not "
        "reconciled yet (observed 1)",
    )
    old = _report(_source(generation=2, observed=1, written=timedelta(minutes=4)), _sync())
    assert old.sources[0].stale is True
    assert old.problems[-1] == (
        "GitRepository flux-system/flux-system is stale: its controller has not reconciled its current spec "
        "for more than 3 intervals of 1m"
    )


CLONE_FAILED = (
    "failed to checkout and determine revision: unable to clone 'ssh://git@127.0.0.1:2222/fleet.git': "
    'couldn\'t find remote ref "refs/heads/no-such-branch"'
)


def _failed_spec_change(
    *, written: timedelta, reason: str = "GitOperationFailed", message: str = CLONE_FAILED
) -> dict[str, Any]:
    """The source as source-controller v1.8.5 and v1.9.4 leave it after a spec change it cannot fetch (a
    branch that does not exist; read back in the cluster test): ``status.observedGeneration`` still at the
    last success, and each condition written since, Ready included, stamped with the current generation
    (fluxcd/pkg ``runtime/conditions.Set``)."""
    source = _source(generation=2, observed=1, written=written)
    source["spec"]["ref"] = {"branch": "no-such-branch"}
    source["status"]["conditions"] = [
        {"type": kind, "status": status, "reason": said, "message": words, "observedGeneration": seen}
        for kind, status, said, words, seen in (
            ("Reconciling", "True", "ProgressingWithRetry", "processing object: new generation 1 -> 2", 2),
            ("Ready", "False", reason, message, 2),
            ("FetchFailed", "True", reason, message, 2),
            ("ArtifactInStorage", "True", "Succeeded", f"stored artifact for revision '{REVISION}'", 1),
        )
    ]
    return source


def test_a_spec_change_that_fails_is_not_ready_in_fluxs_words_not_progressing() -> None:
    report = _report(_failed_spec_change(written=timedelta(minutes=2)), _sync())
    (source,) = report.sources
    assert (source.ready, source.reason, source.message) == (False, "GitOperationFailed", CLONE_FAILED)
    assert source.stale is False
    assert report.problems == (
        f"GitRepository flux-system/flux-system is not Ready (GitOperationFailed): {CLONE_FAILED}",
    )


def test_a_spec_change_that_fails_for_days_is_still_flux_s_verdict_and_never_stale() -> None:
    # The controller answered the new spec at once: it is running, so however old, nothing is stale.
    report = _report(_failed_spec_change(written=timedelta(days=2), reason="AuthenticationFailed"), _sync())
    (source,) = report.sources
    assert source.ready is False and source.reason == "AuthenticationFailed" and source.stale is False
    assert report.problems == (
        f"GitRepository flux-system/flux-system is not Ready (AuthenticationFailed): {CLONE_FAILED}",
    )


def test_a_kustomization_and_another_flux_object_that_fail_a_new_spec_say_why() -> None:
    # kustomize-controller and helm-controller write their conditions the same way.
    sync = _sync()
    sync["metadata"]["generation"] = 3
    sync["status"]["conditions"] = [
        {
            **_condition("False", "BuildFailed", "kustomize build failed: no such path"),
            "observedGeneration": 3,
        }
    ]
    helm = {
        "metadata": {"namespace": "apps", "name": "podinfo", "generation": 5},
        "spec": {},
        "status": {
            "observedGeneration": 4,
            "conditions": [{**_condition("False", "UpgradeFailed", "timeout"), "observedGeneration": 5}],
        },
    }
    report = _report(_source(), sync, [("HelmRelease", helm)])
    assert report.problems == (
        "Kustomization flux-system/flux-system is not Ready (BuildFailed): kustomize build failed: "
        "no such path",
        "HelmRelease apps/podinfo is not Ready (UpgradeFailed): timeout",
    )


def test_drift_and_status_show_flux_s_reason_and_message_in_text_json_and_markdown() -> None:
    import io

    from gitops_infra.automation import Deployment, DeploymentKind, DeploymentResult, StackStatus
    from gitops_infra.cli._console import CliConsole
    from gitops_infra.cli._render.drift import drift_markdown
    from gitops_infra.cli._render.gitops import print_gitops
    from gitops_infra.cli._render.status import print_status, status_markdown

    # The message quotes the branch, and the branch is anyone's who can edit the stack's config.
    hostile = CLONE_FAILED.replace("no-such-branch", "x\nprod: gitops: healthy\x1b[2J")
    layer = _report(_failed_spec_change(written=timedelta(hours=1), message=hostile), _sync())
    said = "GitRepository flux-system/flux-system is not Ready (GitOperationFailed): "
    shown = said + hostile.replace("\n", " ").replace("\x1b", "\\x1b")
    last = Deployment(1, DeploymentKind.UPDATE, DeploymentResult.SUCCEEDED, NOW, NOW, "up", "c" * 40)
    status = StackStatus(stack="dev", last=last, at_head=True, locked=False, gitops=layer)

    for document in (to_jsonable(_drift(layer)), to_jsonable(status)):
        assert document["healthy"] is False
        (source,) = document["gitops"]["sources"]
        assert (source["ready"], source["reason"], source["message"]) == (
            False,
            "GitOperationFailed",
            hostile,
        )
        assert source["stale"] is False and document["gitops"]["problems"] == [said + hostile]

    out = io.StringIO()
    console = CliConsole(file=out, highlight=False, markup=False, soft_wrap=True, width=300)
    print_gitops(console, layer)
    print_status(console, (status,))
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["gitops: 1 problem(s)", "  " + shown]
    assert lines[-2:] == ["  gitops: 1 problem(s)", "    " + shown]
    assert "Progressing" not in out.getvalue() and "stale" not in out.getvalue()

    for markdown in (drift_markdown(_drift(layer)), status_markdown([status])):
        assert f"`{shown}`" in markdown and "\x1b[" not in markdown and "\nprod:" not in markdown
        assert "Progressing" not in markdown and "stale" not in markdown


def test_a_promotion_refused_as_unhealthy_names_flux_s_reason_on_one_line() -> None:
    from gitops_infra.automation.promotion import _unhealthy

    layer = _report(
        _failed_spec_change(written=timedelta(hours=1), message="clone failed\nprod: ok"), _sync()
    )
    assert _unhealthy(layer) == (
        "--require-healthy: GitRepository flux-system/flux-system is not Ready (GitOperationFailed): "
        "clone failed prod: ok"
    )


def test_a_ready_condition_of_an_older_spec_is_not_ready_yet_and_stale_after_three_intervals() -> None:
    # The controller never answered the spec change: its last words speak of generation 1.
    def unanswered(written: timedelta) -> dict[str, Any]:
        source = _source(generation=2, observed=1, written=written)
        source["status"]["conditions"][0]["observedGeneration"] = 1
        return source

    recent = _report(unanswered(timedelta(minutes=2)), _sync())
    assert recent.sources[0].ready is None and recent.sources[0].stale is False
    assert recent.sources[0].message == "generation 2 is not reconciled yet (observed 1)"
    old = _report(unanswered(timedelta(minutes=4)), _sync())
    assert old.sources[0].stale is True and old.problems[-1].endswith("for more than 3 intervals of 1m")


def test_an_object_the_stack_made_and_the_cluster_lacks_is_named() -> None:
    report = _report(None, _sync())
    assert report.sources[0].reason == "NotFound" and report.sources[0].ready is None
    assert report.problems[0].startswith("GitRepository flux-system/flux-system is not Ready yet (NotFound)")
    # With its source gone, no revision is known to lag behind.
    assert report.syncs[0].source_revision is None and not report.syncs[0].lag


def test_other_flux_objects_count_only_when_unwell_and_the_stack_s_own_are_not_counted_twice() -> None:
    helm = {
        "metadata": {"namespace": "apps", "name": "podinfo", "generation": 3},
        "spec": {},
        "status": {"observedGeneration": 3, "conditions": [_condition("False", "InstallFailed", "timeout")]},
    }
    others = [
        ("Kustomization", _sync()),  # the stack's own, already judged
        ("Kustomization", _sync(name="apps")),  # healthy
        ("Kustomization", _sync(name="paused", suspend=True)),
        ("HelmRelease", helm),
    ]
    report = _report(_source(), _sync(), others)
    assert [f.shown for f in report.failing] == [
        "HelmRelease apps/podinfo",
        "Kustomization flux-system/paused",
    ]
    assert report.problems == (
        "HelmRelease apps/podinfo is not Ready (InstallFailed): timeout",
        "Kustomization flux-system/paused is suspended",
    )


def test_an_unreadable_cluster_is_one_problem_and_never_healthy() -> None:
    report = GitOpsReport(error="connection refused")
    assert not report.healthy and report.problems == ("the cluster could not be read: connection refused",)
    assert GitOpsReport().healthy  # a Flux with nothing to say is healthy


# -- what the state says ------------------------------------------------------------------------------------


def test_the_stack_s_flux_objects_and_its_provider_s_kubeconfig_are_read_from_the_state() -> None:
    state = _state({SECRET_SIG_KEY: SECRET_SIG, "plaintext": json.dumps("apiVersion: v1\nclusters: []\n")})
    made = [m for m in (_made(r) for r in state["resources"]) if m is not None]
    assert [(m.kind, m.namespace, m.name, m.version) for m in made] == [
        ("GitRepository", "flux-system", "flux-system", "v1"),
        ("Kustomization", "flux-system", "flux-system", "v1"),
    ]  # the resource pending deletion is not the stack's any more
    assert made[1].source_ref == ("GitRepository", "flux-system", "flux-system")
    access = provider_access(state, state["resources"][1]["provider"])
    assert access.kubeconfig == "apiVersion: v1\nclusters: []\n" and access.context is None
    default = "urn:pulumi:dev::p::pulumi:providers:kubernetes::default::1"
    assert provider_access(state, default).kubeconfig is None


# -- which Flux API version is read ----------------------------------------------------------------------


def test_versions_sort_by_kubernetes_priority_as_the_api_server_orders_a_crd_s() -> None:
    # The example of the Kubernetes docs ("Version priority", CustomResourceDefinition versioning).
    shuffled = [
        "foo10",
        "v11alpha2",
        "v1",
        "v3beta1",
        "foo1",
        "v10beta3",
        "v2",
        "v12alpha1",
        "v11beta2",
        "v10",
    ]
    assert sorted(shuffled, key=version_priority) == [
        "v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("served", "read"),
    [
        pytest.param(("v2",), "v2", id="flux-2.8"),
        pytest.param(("v2", "v2beta2", "v2beta1"), "v2", id="flux-2.3"),
        pytest.param(("v2beta2", "v2beta1"), "v2beta2", id="flux-2.2"),
        pytest.param(("v2beta1",), "v2beta1", id="flux-2.1"),
        pytest.param(("v3",), "v3", id="only-a-version-newer-than-this-code"),
        pytest.param(("v3alpha1", "v3"), "v3", id="unknown-ones-by-kubernetes-priority"),
        pytest.param(("v3", "v2", "v2beta2"), "v2", id="the-newest-known-before-an-unknown"),
        pytest.param((), None, id="no-crd"),
    ],
)
def test_a_helm_release_is_read_at_the_newest_known_version_served_else_the_highest_served(
    served: tuple[str, ...], read: str | None
) -> None:
    assert served_version(served, HELM_RELEASE.versions) == read


def test_each_flux_kind_lists_every_version_flux_served_it_at_newest_first() -> None:
    for kind in (GIT_REPOSITORY, KUSTOMIZATION, HELM_RELEASE):
        assert list(kind.versions) == sorted(kind.versions, key=version_priority), kind
    # Flux 2.2 serves a HelmRelease only at these; Flux before 2.0 a Kustomization and a GitRepository.
    assert {"v2beta2", "v2beta1"} <= set(HELM_RELEASE.versions)
    assert "v1beta2" in KUSTOMIZATION.versions and "v1beta2" in GIT_REPOSITORY.versions
    assert SYNC_KINDS == (KUSTOMIZATION, HELM_RELEASE)


def flux_api_names(source: str) -> list[str]:
    """Every string literal of ``source`` that names a Flux API group (``<x>.toolkit.fluxcd.io[/v]``)."""
    import ast
    import re

    group = re.compile(r"[a-z]+\.toolkit\.fluxcd\.io(/\w+)?")
    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and group.fullmatch(node.value)
    ]


def test_no_module_of_the_automation_layer_names_a_flux_api_but_the_one_list() -> None:
    """The GitOps read and the drain take each kind's group and versions from ``_cluster/flux_apis.py``
    alone, so a version added there is read and suspended alike."""
    package = Path(__file__).resolve().parents[2] / "gitops_infra" / "automation"
    named = {
        path.name: found
        for path in sorted(package.rglob("*.py"))
        if (found := flux_api_names(path.read_text()))
    }
    assert list(named) == ["flux_apis.py"], named
    # The rule catches what it forbids: the version list as the drain held it before.
    assert flux_api_names('_custom("HelmRelease", "helm.toolkit.fluxcd.io", "helmreleases", ("v2",))') == [
        "helm.toolkit.fluxcd.io"
    ]


def test_a_stack_without_flux_has_no_gitops_section() -> None:
    assert gitops_of({"resources": [{"urn": "u", "type": "aws:s3/bucket:Bucket"}]}) is None


def test_a_kubeconfig_is_text_or_a_path_and_a_broken_one_is_named_without_its_content(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Config\nclusters: []\n"
    assert kubeconfig_of(provider_access(_state(text), f"{PROVIDER_URN}::1")) == {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [],
    }
    path = tmp_path / "config"
    path.write_text(text)
    assert kubeconfig_of(provider_access(_state(str(path)), f"{PROVIDER_URN}::1"))["kind"] == "Config"  # type: ignore[index]
    # A relative path is from the project.
    relative = replace(provider_access(_state("config"), f"{PROVIDER_URN}::1"), base=tmp_path)
    assert kubeconfig_of(relative)["kind"] == "Config"  # type: ignore[index]
    broken = "apiVersion: v1\nusers:\n- user: {token: s3cr3t-t0ken-value\n"
    with pytest.raises(ValueError, match="not valid YAML") as caught:
        kubeconfig_of(provider_access(_state(broken), f"{PROVIDER_URN}::1"))
    assert "s3cr3t" not in str(caught.value)


def test_certificate_data_goes_to_private_files_that_the_read_removes(tmp_path: Path) -> None:
    key = DeployKeyPair.generate().private_key.encode()  # generated here: no key material in the repository
    config = {
        "clusters": [{"name": "c", "cluster": {"server": "https://x", "certificate-authority-data": "Y2E="}}],
        "users": [{"name": "u", "user": {"client-key-data": b64encode(key).decode()}}],
    }
    written = materialised(config, tmp_path)
    user = written["users"][0]["user"]
    assert "client-key-data" not in user and Path(user["client-key"]).read_bytes() == key
    assert stat.S_IMODE(os.stat(user["client-key"]).st_mode) == 0o600
    assert config["users"][0]["user"]["client-key-data"]  # the caller's copy is untouched


def _kubeconfig_to(port: int, token: str, key: bytes = b"a key") -> str:
    return (
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n"
        f"    certificate-authority-data: {b64encode(b'not a CA').decode()}\n"
        f"users:\n- name: u\n  user:\n    token: {token}\n"
        f"    client-key-data: {b64encode(key).decode()}\n"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\n"
    )


def _holding(needle: bytes) -> set[Path]:
    """Every file in the temp directory, a level deep, that holds ``needle``."""
    found = set()
    for path in [*Path(tempfile.gettempdir()).glob("*"), *Path(tempfile.gettempdir()).glob("*/*")]:
        try:
            if path.is_file() and path.stat().st_size < 1_000_000 and needle in path.read_bytes():
                found.add(path)
        except OSError:
            continue
    return found


def test_a_cluster_that_cannot_be_reached_is_the_layer_s_error_with_no_credential_and_no_file_left() -> None:
    from gitops_infra.local import free_port

    token = "t0ken-that-must-never-be-printed"
    # A key of this test's own: the Kubernetes client, left to itself, writes key data to temp files it
    # removes only at exit (reused by content, so an earlier client's key would hide them).
    key = DeployKeyPair.generate().private_key.encode()
    report = gitops_of(_state(_kubeconfig_to(free_port(), token, key)))
    assert report is not None and report.error is not None and not report.healthy
    assert "refused" in report.error.lower() and "127.0.0.1" in report.error, report.error
    assert token not in json.dumps(to_jsonable(report))
    assert _holding(key) == set()


def test_an_api_error_says_the_status_and_the_server_s_message_and_scrubs_credentials() -> None:
    from kubernetes.client.exceptions import ApiException

    exc = ApiException(status=401, reason="Unauthorized")
    exc.body = json.dumps({"message": "token s3cr3t-t0ken-value is expired"})
    assert why(exc, ["s3cr3t-t0ken-value"]) == (
        "the API server answered 401 Unauthorized: token [secret] is expired"
    )


# -- the report, its JSON, and the exit codes -------------------------------------------------------------


def _drift(gitops: GitOpsReport | None, *, drifted: bool = False) -> DriftReport:
    from gitops_infra.automation import DriftedResource, DriftKind

    resources = (DriftedResource(urn="u", type="t", kind=DriftKind.DELETED),) if drifted else ()
    return DriftReport(stack="dev", resources=resources, gitops=gitops, layers=(Layer.IAC, Layer.GITOPS))


UNHEALTHY = GitOpsReport(
    syncs=(GitOpsSync("Kustomization", "flux-system", "flux-system", ready=True, suspended=True),)
)
HEALTHY = GitOpsReport(sources=(GitOpsSource("GitRepository", "flux-system", "flux-system", ready=True),))


@pytest.mark.parametrize(
    ("report", "code"),
    [
        (_drift(None), 0),  # no Flux: the IaC answer alone
        (_drift(HEALTHY), 0),
        (_drift(HEALTHY, drifted=True), 2),
        (_drift(UNHEALTHY), 2),
        (_drift(GitOpsReport(error="connection refused")), 2),
    ],
)
def test_drift_exits_2_when_either_layer_fails(report: DriftReport, code: int) -> None:
    assert drift_exit(report) == code
    assert report.has_drift is (code == 2 and bool(report.resources))


def test_the_fleet_exits_2_for_an_unhealthy_stack_and_1_only_for_errors() -> None:
    from gitops_infra.automation import StackError

    healthy = StackDrift(stack="a", report=_drift(HEALTHY), project="p")
    sick = StackDrift(stack="b", report=_drift(UNHEALTHY), project="p")
    broken = StackDrift(stack="c", report=None, error=StackError("StackNotFoundError", "no"), project="p")
    assert fleet_drift_exit(FleetDrift(stacks=(healthy,))) == 0
    assert fleet_drift_exit(FleetDrift(stacks=(healthy, sick, broken))) == 2
    assert fleet_drift_exit(FleetDrift(stacks=(healthy, broken))) == 1


def test_the_json_carries_both_answers_and_a_merged_report_keeps_them(tmp_path: Path) -> None:
    report = _drift(UNHEALTHY)
    document = to_jsonable(report)
    assert document["has_drift"] is False and document["healthy"] is False
    assert document["layers"] == ["iac", "gitops"]
    assert document["gitops"]["problems"] == ["Kustomization flux-system/flux-system is suspended"]
    assert document["gitops"]["syncs"][0]["lag"] is False
    path = tmp_path / "dev.json"
    path.write_text(json.dumps({**document, "project": "p"}))
    (merged,) = merge_drift_reports([path]).stacks
    assert merged.report is not None and merged.report.gitops == UNHEALTHY and not merged.healthy


def test_layers_are_parsed_and_a_bad_one_is_named() -> None:
    assert Layer.parse("gitops,iac") == (Layer.IAC, Layer.GITOPS)
    assert Layer.parse(" gitops ") == (Layer.GITOPS,)
    for bad in ("", "iac,k8s", ","):
        with pytest.raises(ArgumentError, match="comma-separated list of iac and gitops"):
            Layer.parse(bad)
    result = CliRunner().invoke(main, ["drift", "dev", "--layers", "flux"])
    assert result.exit_code == 1 and "'flux'" in result.output and "Traceback" not in result.output


def test_a_promotion_s_max_age_must_be_a_positive_duration() -> None:
    for bad, said in (
        ("soon", "not a Go duration"),
        ("0s", "not a positive duration"),
        ("9" * 40 + "h", "2562047h"),
    ):
        result = CliRunner().invoke(main, ["promote", "dev", "prod", "--max-age", bad, "--yes"])
        assert result.exit_code == 1 and said in result.output, result.output


def test_a_flux_status_names_itself_as_flux_does() -> None:
    status = FluxStatus("HelmRelease", "apps", "podinfo", ready=None)
    assert status.shown == "HelmRelease apps/podinfo"
    assert status.problems == ("HelmRelease apps/podinfo is not Ready yet",)


def test_a_credential_plugin_that_is_not_installed_is_named_and_nothing_else_is_printed(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import logging

    from gitops_infra.local import free_port

    # What an EKS kubeconfig holds: `aws eks get-token`, here a command that does not exist.
    kubeconfig = (
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: c\n  cluster: {{server: 'https://127.0.0.1:{free_port()}'}}\n"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\n"
        "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
        "      command: aws-cli-that-is-not-installed\n      args: [eks, get-token, --cluster-name, x]\n"
    )
    handlers = list(logging.getLogger().handlers)
    report = gitops_of(_state(kubeconfig))
    assert report is not None and report.error is not None
    assert (
        "the client said: [Errno 2] No such file or directory: 'aws-cli-that-is-not-installed'"
        in report.error
    )
    captured = capfd.readouterr()
    assert captured.out == captured.err == ""  # neither the client's log nor urllib3's retry warnings
    assert logging.getLogger().handlers == handlers  # the process's logging is as it was


def test_a_flux_message_on_a_terminal_is_one_line_and_forges_no_other() -> None:
    import io

    from gitops_infra.cli._console import CliConsole
    from gitops_infra.cli._render.drift import print_fleet_drift
    from gitops_infra.cli._render.gitops import print_gitops

    # kustomize quotes the files it could not build, and those come from git: anyone who can push.
    forged = "build failed\nprod: no drift; gitops: healthy\n\x1b[2Jwiped"
    layer = GitOpsReport(
        syncs=(GitOpsSync("Kustomization", "flux-system", "apps", ready=False, message=forged),)
    )
    out = io.StringIO()
    console = CliConsole(file=out, highlight=False, markup=False, soft_wrap=True, width=200)
    print_gitops(console, layer)
    print_fleet_drift(
        console, FleetDrift(stacks=(StackDrift(stack="dev", report=_drift(layer), project="p"),))
    )
    problem = "  Kustomization flux-system/apps is not Ready: build failed prod: no drift; gitops: healthy "
    lines = out.getvalue().splitlines()
    assert lines == [
        "gitops: 1 problem(s)",
        problem + "\\x1b[2Jwiped",
        "dev: no drift; gitops: 1 problem(s)",
        problem + "\\x1b[2Jwiped",
    ]
