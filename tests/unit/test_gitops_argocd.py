"""The GitOps layer with Argo CD: the stack's root Application found in the state, and what Argo CD reports
of it (and of every other Application) judged, in text, JSON and Markdown.

The objects are what Argo CD's application controller writes; the cluster tier runs the same code against
the real controller (tests/cluster/test_argocd_stack.py).
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

from gitops_infra.automation import GitOpsReport
from gitops_infra.automation._cluster.gitops import _made, gitops_report
from gitops_infra.automation.results import to_jsonable
from gitops_infra.cli._console import CliConsole
from gitops_infra.cli._render.gitops import gitops_markdown, print_gitops

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
SHA = "a" * 40
ROOT_TYPE = "kubernetes:argoproj.io/v1alpha1:Application"


def _application(
    name: str = "platform",
    *,
    sync: str = "Synced",
    health: str = "Healthy",
    conditions: list[dict[str, str]] | None = None,
    operation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"sync": {"status": sync, "revision": SHA}, "health": {"status": health}}
    if conditions:
        status["conditions"] = conditions
    if operation:
        status["operationState"] = operation
    return {"metadata": {"namespace": "argocd", "name": name}, "status": status}


def _report(root: dict[str, Any] | None, *others: dict[str, Any]) -> GitOpsReport:
    made = _made(
        {"type": ROOT_TYPE, "outputs": {"metadata": {"namespace": "argocd", "name": "platform"}, "spec": {}}}
    )
    assert made is not None
    read = {("Application", "argocd", "platform"): root}
    every = [("Application", obj) for obj in (*([root] if root else []), *others)]
    return gitops_report([made], read, every, NOW)


def test_a_synced_healthy_root_is_healthy_and_shows_its_revision() -> None:
    report = _report(_application(), _application("apps-in-cluster"))
    assert report.healthy and report.problems == ()
    (root,) = report.applications  # a healthy child is not reported
    assert (root.root, root.ready, root.revision) == (True, True, SHA)
    out = io.StringIO()
    print_gitops(CliConsole(file=out, width=300), report)
    assert out.getvalue().splitlines() == [
        "gitops: healthy",
        f"  Application argocd/platform Synced and Healthy at {SHA}",
    ]


def test_a_failed_fetch_is_argo_cd_s_condition_in_its_words() -> None:
    said = "Failed to load target state: rpc error: authentication required"
    report = _report(_application(sync="Unknown", conditions=[{"type": "ComparisonError", "message": said}]))
    assert not report.healthy
    assert report.problems == (
        f"Application argocd/platform is Unknown at {SHA}",
        f"Application argocd/platform: ComparisonError: {said}",
    )
    document = to_jsonable(report)
    (root,) = document["applications"]
    assert (root["sync"], root["ready"], root["root"]) == ("Unknown", False, True)
    assert document["problems"][1].endswith(said)


def test_a_failed_sync_and_an_unhealthy_child_are_named() -> None:
    failed = {
        "phase": "Failed",
        "message": "one or more objects failed to apply",
        "syncResult": {"revision": SHA},
    }
    report = _report(
        _application(sync="OutOfSync", operation=failed), _application("apps-in-cluster", health="Degraded")
    )
    assert report.problems == (
        f"Application argocd/platform is OutOfSync at {SHA}",
        "Application argocd/platform: its last sync failed: one or more objects failed to apply",
        "Application argocd/apps-in-cluster is Degraded",
    )
    assert [a.name for a in report.applications] == ["platform", "apps-in-cluster"]


def test_a_root_the_cluster_lacks_is_named() -> None:
    report = _report(None)
    assert report.problems == ("Application argocd/platform is not in the cluster (the stack made it)",)


def test_markdown_lists_the_applications_and_escapes_argo_cd_s_words() -> None:
    hostile = "x | y\n## forged\x1b[2J"
    report = _report(
        _application(sync="Unknown", conditions=[{"type": "ComparisonError", "message": hostile}])
    )
    markdown = "\n".join(gitops_markdown(report))
    assert "| application | sync | health | revision | last sync |" in markdown
    assert "\n## forged" not in markdown and "\x1b[" not in markdown
    assert "| kind | object | ready |" not in markdown  # no Flux in this stack: no Flux table


def test_an_application_of_another_argo_cd_is_not_the_stack_s() -> None:
    other = {
        **_application("elsewhere", health="Degraded"),
        "metadata": {"namespace": "team-argocd", "name": "x"},
    }
    report = _report(_application(), other)
    assert report.healthy and [a.name for a in report.applications] == ["platform"]
