"""Why an object ``up`` waited for never became Ready, from the checkpoint: Flux's words, or the request
Flux has not handled yet."""

from __future__ import annotations

from typing import Any

from gitops_infra.automation._cluster.readiness import not_ready_reasons


def _deployment(outputs: dict[str, Any], *, failed: bool = True) -> dict[str, Any]:
    resource = {"type": "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository", "outputs": outputs}
    return {"resources": [{**resource, **({"initErrors": ["timed out"]} if failed else {})}]}


def _repository(annotations: dict[str, str], status: dict[str, Any], **spec: Any) -> dict[str, Any]:
    metadata = {"name": "flux-system", "namespace": "flux-system", "annotations": annotations}
    return {"kind": "GitRepository", "metadata": metadata, "spec": spec, "status": status}


REFUSED = {
    "type": "Ready",
    "status": "False",
    "reason": "GitOperationFailed",
    "message": "unable to authenticate",
}
READY = {"type": "Ready", "status": "True", "reason": "Succeeded", "message": "stored artifact"}
REQUEST = {"reconcile.fluxcd.io/requestedAt": "sha256-new"}


def test_a_handled_request_gives_flux_s_own_words_and_says_flux_switched_already_and_the_way_back() -> None:
    handled = {"lastHandledReconcileAt": "sha256-new", "conditions": [REFUSED]}
    assert not_ready_reasons(_deployment(_repository(REQUEST, handled)), stack="prod") == [
        "GitRepository flux-system/flux-system is not Ready (GitOperationFailed): unable to authenticate. "
        "Flux already fetches with the credential this update wrote (its Secret is updated in place), and "
        "applies nothing new from git until that credential works; the credential it replaced stays "
        "registered until an update succeeds. To go back, undo the change and run up, or run "
        "`gitops-infra rollback prod previous`"
    ]


def test_an_object_without_a_credential_request_gives_flux_s_words_alone() -> None:
    failed = {"conditions": [REFUSED]}
    assert not_ready_reasons(_deployment(_repository({}, failed))) == [
        "GitRepository flux-system/flux-system is not Ready (GitOperationFailed): unable to authenticate"
    ]


def test_an_unhandled_request_says_so_whatever_the_old_ready_says() -> None:
    # The Ready condition is from before the new key: it says nothing of it.
    stale = {"lastHandledReconcileAt": "sha256-old", "conditions": [READY]}
    assert not_ready_reasons(_deployment(_repository(REQUEST, stale))) == [
        "GitRepository flux-system/flux-system has not handled the reconcile request sha256-new "
        "(last handled: sha256-old): is its controller running?"
    ]
    never = {"conditions": [READY]}
    (reason,) = not_ready_reasons(_deployment(_repository(REQUEST, never)))
    assert "(last handled: none)" in reason


def test_a_suspended_source_is_named_though_it_recorded_the_request() -> None:
    # Suspended, source-controller records the request as handled and fetches nothing.
    recorded = {"lastHandledReconcileAt": "sha256-new", "conditions": [READY]}
    assert not_ready_reasons(_deployment(_repository(REQUEST, recorded, suspend=True))) == [
        "GitRepository flux-system/flux-system is suspended (spec.suspend: true), so Flux fetched nothing "
        "with the new credential: resume it (flux resume source git flux-system -n flux-system) and run "
        "up again"
    ]


def test_what_did_not_fail_or_has_no_request_and_is_ready_gives_nothing() -> None:
    stale = {"lastHandledReconcileAt": "sha256-old", "conditions": [READY]}
    assert not_ready_reasons(_deployment(_repository(REQUEST, stale), failed=False)) == []
    assert not_ready_reasons(_deployment(_repository({}, {"conditions": [READY]}))) == []


def _root(annotations: dict[str, str], status: dict[str, Any]) -> dict[str, Any]:
    metadata = {"name": "platform", "namespace": "argocd", "annotations": annotations}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": metadata,
        "status": status,
    }


def test_an_argo_cd_root_that_failed_gives_argo_cd_s_condition_and_message() -> None:
    said = "Failed to load target state: authentication required"
    failed = {
        "sync": {"status": "Unknown", "revision": "abc"},
        "health": {"status": "Healthy"},
        "conditions": [{"type": "ComparisonError", "message": said}],
    }
    assert not_ready_reasons(_deployment(_root({}, failed))) == [
        f"Application argocd/platform is Unknown at abc; Application argocd/platform: ComparisonError: {said}"
    ]


def test_an_argo_cd_root_that_never_answered_its_refresh_says_so() -> None:
    synced = {"sync": {"status": "Synced", "revision": "abc"}, "health": {"status": "Healthy"}}
    assert not_ready_reasons(_deployment(_root({"argocd.argoproj.io/refresh": "hard"}, synced))) == [
        "Application argocd/platform has not answered the refresh request (argocd.argoproj.io/refresh): is "
        "Argo CD's application controller running?"
    ]
    assert not_ready_reasons(_deployment(_root({}, synced))) == []
