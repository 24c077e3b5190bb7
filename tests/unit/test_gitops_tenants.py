"""Tenants in the GitOps layer: ``TenantSync`` and ``GitOpsReport``'s tenants as Flux's objects judge them,
and as ``drift``, ``status`` and ``promote`` show them in text, Markdown and JSON.

The objects are what kustomize-controller and source-controller write for a tenant locked down (as the
cluster tests read them back): team-a's commit reached into team-b's namespace and was refused, naming
the user Flux impersonated; team-b applied its commit.
"""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from gitops_infra.automation import (
    Deployment,
    DeploymentKind,
    DeploymentResult,
    DriftReport,
    GitOpsReport,
    GitOpsSync,
    Layer,
    PromotionEvidence,
    PromotionResult,
    StackStatus,
    TenantSync,
)
from gitops_infra.automation._cluster.gitops import gitops_report
from gitops_infra.automation._cluster.tenants import Tenant, TenantObjects
from gitops_infra.automation.promotion import _unhealthy
from gitops_infra.automation.results import to_jsonable
from gitops_infra.cli import to_markdown
from gitops_infra.cli._console import CliConsole
from gitops_infra.cli._render.drift import print_drift
from gitops_infra.cli._render.operations import print_promotion
from gitops_infra.cli._render.status import print_status

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
APPLIED = "main@sha1:" + "a" * 40
HEAD = "main@sha1:" + "b" * 40
REFUSED = (
    'ConfigMap/team-b/not-yours dry-run failed (Forbidden): configmaps "not-yours" is forbidden: User '
    '"system:serviceaccount:team-a:team-a-reconciler" cannot patch resource "configmaps" in API group "" '
    'in the namespace "team-b"'
)
"""kustomize-controller's words when the API server refuses the impersonated reconciler."""
TOKEN = "ghp_" + "S3cr3t" * 6
"""A credential where a tenant's objects could hold one: it must never be shown."""


def _source(home: str, name: str) -> dict[str, Any]:
    return {
        "metadata": {
            "namespace": home,
            "name": name,
            "generation": 1,
            "labels": {"gitops-infra.io/tenant": name},
        },
        "spec": {
            "interval": "1m",
            "url": f"https://x-access-token:{TOKEN}@github.com/acme/fleet",
            "secretRef": {"name": f"{name}-git"},
        },
        "status": {
            "observedGeneration": 1,
            "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "stored"}],
            "artifact": {"revision": HEAD, "lastUpdateTime": "2026-12-01T11:00:00Z"},
        },
    }


def _kustomization(home: str, name: str, *, message: str | None) -> dict[str, Any]:
    """Ready at ``HEAD``; or, with ``message``, refused and still at what it applied before."""
    ready = (
        {"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded", "message": f"Applied {HEAD}"}
        if message is None
        else {"type": "Ready", "status": "False", "reason": "ReconciliationFailed", "message": message}
    )
    return {
        "metadata": {"namespace": home, "name": name, "generation": 1},
        "spec": {
            "serviceAccountName": f"{name}-reconciler",
            "sourceRef": {"kind": "GitRepository", "name": name},
            "decryption": {"provider": "sops", "secretRef": {"name": TOKEN}},
        },
        "status": {
            "observedGeneration": 1,
            "conditions": [ready],
            "lastAppliedRevision": HEAD if message is None else APPLIED,
        },
    }


def _layer(message: str = REFUSED, *, b_name: str = "team-b") -> GitOpsReport:
    """The stack's tenants as the GitOps read finds them: team-a refused with ``message``, team-b Ready.

    Every Kustomization in the cluster is listed as well (as the read lists them), tenants' included:
    a tenant's is reported once, by the tenant."""
    a = TenantObjects(
        Tenant("team-a", "team-a", ("team-a",), "team-a"),
        _kustomization("team-a", "team-a", message=message),
        _source("team-a", "team-a"),
    )
    b = TenantObjects(
        Tenant(b_name, "team-b", ("team-b", "team-b-jobs"), b_name),
        _kustomization("team-b", b_name, message=None),
        _source("team-b", b_name),
    )
    others = [("Kustomization", found.kustomization) for found in (a, b) if found.kustomization]
    return gitops_report([], {}, others, NOW, [a, b])


A_NOT_READY = f"tenant team-a: Kustomization team-a/team-a is not Ready (ReconciliationFailed): {REFUSED}"
A_LAGS = (
    f"tenant team-a: Kustomization team-a/team-a lags its source: applied {APPLIED}, the source is at {HEAD}"
)


# -- the result type ---------------------------------------------------------------------------------------


def test_a_refused_tenant_is_a_problem_by_name_and_the_other_stays_healthy() -> None:
    layer = _layer()
    a, b = layer.tenants
    assert (a.name, a.namespace, a.namespaces, b.namespaces) == (
        "team-a",
        "team-a",
        ("team-a",),
        ("team-b", "team-b-jobs"),
    )
    assert a.sync.ready is False and a.sync.message == REFUSED and a.source is not None and a.source.ready
    assert a.problems == (A_NOT_READY, A_LAGS) and not a.healthy
    assert b.problems == () and b.healthy and b.sync.applied_revision == HEAD
    # The layer: each tenant's problems, once (not again as a failing Kustomization), and a count.
    assert layer.problems == (A_NOT_READY, A_LAGS) and layer.failing == ()
    assert layer.healthy_tenants == 1 and not layer.healthy


def test_a_tenant_whose_kustomization_is_gone_is_named() -> None:
    missing = TenantObjects(Tenant("team-c", "team-c", ("team-c",), "team-c"), None, None)
    layer = gitops_report([], {}, [], NOW, [missing])
    (c,) = layer.tenants
    assert c.source is None and c.sync.reason == "NotFound"
    assert layer.problems == (
        "tenant team-c: Kustomization team-c/team-c is not Ready yet (NotFound): the stack made it, and it "
        "is not in the cluster",
    )
    assert layer.healthy_tenants == 0


def test_a_tenant_s_unready_source_counts_against_it_and_all_healthy_is_healthy() -> None:
    sync = GitOpsSync("Kustomization", "shop", "shop", ready=True, applied_revision=HEAD)
    healthy = TenantSync("shop", "shop", ("shop",), sync)
    assert healthy.healthy and GitOpsReport(tenants=(healthy,)).healthy
    assert GitOpsReport(tenants=(healthy,)).healthy_tenants == 1
    from gitops_infra.automation import GitOpsSource

    source = GitOpsSource(
        "GitRepository", "shop", "shop", ready=False, reason="AuthenticationFailed", message="x"
    )
    broken = TenantSync("shop", "shop", ("shop",), sync, source)
    assert broken.problems == ("tenant shop: GitRepository shop/shop is not Ready (AuthenticationFailed): x",)
    # An unreadable cluster is one problem: no tenant is judged, or counted healthy, on a guess.
    unread = GitOpsReport(tenants=(healthy,), error="connection refused")
    assert unread.problems == ("the cluster could not be read: connection refused",) and not unread.healthy


# -- text -------------------------------------------------------------------------------------------------


def _text(*render: Any) -> list[str]:
    out = io.StringIO()
    console = CliConsole(file=out, highlight=False, markup=False, soft_wrap=True, width=400)
    for function, *args in render:
        function(console, *args)
    return out.getvalue().splitlines()


def _drift(layer: GitOpsReport) -> DriftReport:
    return DriftReport(stack="dev", gitops=layer, layers=(Layer.IAC, Layer.GITOPS))


def _status(layer: GitOpsReport) -> StackStatus:
    last = Deployment(7, DeploymentKind.UPDATE, DeploymentResult.SUCCEEDED, NOW, NOW, "up", "c" * 40)
    return StackStatus(stack="dev", last=last, at_head=True, locked=False, gitops=layer)


def test_drift_and_status_text_show_each_tenant_by_name_with_flux_s_refusal() -> None:
    layer = _layer()
    tenants = [
        "gitops: 2 problem(s); tenants: 1 of 2 healthy",
        "  tenant team-a (team-a): 2 problem(s)",
        f"  tenant team-b (team-b): healthy, applied {HEAD}",
        "  " + A_NOT_READY,
        "  " + A_LAGS,
    ]
    assert _text((print_drift, "dev", _drift(layer))) == ["dev: no drift", *tenants]
    status = _text((print_status, (_status(layer),)))
    assert status[1:] == ["  " + line for line in tenants]
    assert status[0].startswith("dev: version 7 update succeeded")


def test_a_hostile_message_or_name_is_one_line_in_text() -> None:
    # The message quotes what the team committed; a report read back by `fleet report` is any text.
    forged = "\ndev: no drift\n\x1b[2Jgitops: healthy"
    layer = _layer(REFUSED + forged, b_name="team-b" + forged)
    lines = _text((print_drift, "dev", _drift(layer)))
    assert len(lines) == 6, lines
    assert (
        lines[3] == f"  tenant team-b dev: no drift \\x1b[2Jgitops: healthy (team-b): healthy, applied {HEAD}"
    )
    assert lines[4].endswith('"team-b" dev: no drift \\x1b[2Jgitops: healthy')
    assert not any(line.startswith(("dev: no drift", "gitops: healthy")) for line in lines[1:])


def test_promote_counts_the_tenants_in_its_refusal_and_its_evidence() -> None:
    assert _unhealthy(_layer()) == (f"--require-healthy: {A_NOT_READY}; {A_LAGS} (1 of 2 tenants healthy)")
    healthy = _layer(b_name="team-b")
    healthy = GitOpsReport(tenants=(healthy.tenants[1],), checked_at=NOW)
    evidence = PromotionEvidence("dev", "0" * 40, 3, NOW, 60.0, drift=False, gitops=healthy)
    promoted = PromotionResult(
        stack="prod", changes={"update": 1}, version=4, commit="0" * 40, outputs={}, evidence=evidence
    )
    assert "  evidence: tenants: 1 of 1 healthy" in _text((print_promotion, promoted))
    assert "| tenants | 1 of 1 healthy |" in to_markdown(promoted)


# -- Markdown -----------------------------------------------------------------------------------------------

STATUS_ROWS = 2
"""The status table: a header and the stack's row."""
HOSTILE = [
    "evil | pipes | everywhere",
    "`evil` and ``evil`` and ```evil",
    "<img src=x onerror=alert('evil')></details><script>alert('evil')</script>",
    "evil\n\n| forged | row |\n|---|---|\n| a | b |",
    "evil\r\n# a heading <!-- the rest vanishes",
]


def _html(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def _outside_code(html: str) -> str:
    return re.sub(r"<code>.*?</code>", "", html, flags=re.S)


def test_markdown_shows_each_tenant_by_name_in_a_table_of_its_own() -> None:
    text = to_markdown(_drift(_layer()))
    assert "#### GitOps layer: 2 problem(s); tenants: 1 of 2 healthy" in text
    assert "| tenant | namespaces | kustomization | ready | applied |" in text
    assert f"| `team-a` | `team-a` | `team-a/team-a` | no | `{APPLIED}` |" in text
    assert f"| `team-b` | `team-b, team-b-jobs` | `team-b/team-b` | yes | `{HEAD}` |" in text
    # Flux's message whole, with the user it impersonated, as code.
    assert f"- `{A_NOT_READY}`" in text and "system:serviceaccount:team-a:team-a-reconciler" in text


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_hostile_message_or_name_breaks_no_markdown_table(hostile: str) -> None:
    # The message quotes what the team committed; a report read back by `fleet report` is any text.
    layer = _layer(f"{REFUSED} {hostile}", b_name=hostile)
    drift, status = to_markdown(_drift(layer)), to_markdown((_status(layer),))
    # <tr> rows: the Flux objects' header, then the tenants' header and a row each; status has a row a
    # stack, and each tenant's problems in its folded messages.
    for markdown, rows in ((drift, 1 + 3), (status, STATUS_ROWS)):
        html = _html(markdown)
        outside = _outside_code(html)
        assert "evil" not in outside, outside  # only ever inside code: never a tag, a link, a heading
        for tag in ("<img", "<script", "<!--", "<h1"):
            assert tag not in outside, (tag, outside)
        assert html.count("<details>") == html.count("</details>") <= 1
        assert html.count("<tr>") == rows, html  # no row forged, none broken
        assert "<code>tenant team-a: Kustomization team-a/team-a is not Ready" in html
    assert _html(drift).count("<td><code>team-a</code></td>") == 2  # its name and its one namespace
    assert (
        "| `dev` | `v7 update succeeded` |" in status and "2 problem(s); tenants: 1 of 2 healthy |" in status
    )


# -- JSON ---------------------------------------------------------------------------------------------------


def test_json_carries_each_tenant_by_name_with_flux_s_words_and_the_count() -> None:
    for document in (to_jsonable(_drift(_layer())), to_jsonable(_status(_layer()))):
        gitops = json.loads(json.dumps(document))["gitops"]
        a, b = gitops["tenants"]
        assert (a["name"], a["namespace"], a["namespaces"]) == ("team-a", "team-a", ["team-a"])
        assert (a["sync"]["ready"], a["sync"]["reason"], a["sync"]["message"]) == (
            False,
            "ReconciliationFailed",
            REFUSED,
        )
        assert a["healthy"] is False and a["problems"] == [A_NOT_READY, A_LAGS]
        assert (b["name"], b["healthy"], b["problems"], b["sync"]["applied_revision"]) == (
            "team-b",
            True,
            [],
            HEAD,
        )
        assert gitops["healthy_tenants"] == 1 and gitops["problems"] == [A_NOT_READY, A_LAGS]


def test_no_credential_of_a_tenant_s_objects_is_shown_anywhere() -> None:
    layer = _layer()
    shown = [
        json.dumps(to_jsonable(_drift(layer))),
        json.dumps(to_jsonable(_status(layer))),
        to_markdown(_drift(layer)),
        to_markdown((_status(layer),)),
        "\n".join(_text((print_drift, "dev", _drift(layer)), (print_status, (_status(layer),)))),
    ]
    for text in shown:
        assert "team-a" in text and TOKEN not in text and "x-access-token" not in text
