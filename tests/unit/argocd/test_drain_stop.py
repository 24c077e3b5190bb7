"""What the drain reads as Argo CD syncing on its own, the order it stops it in, and the patches it sends
(the drain itself runs on the local cluster: ``tests/cluster/test_drain_argocd.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from gitops_infra.automation._cluster.argocd import (
    STOP_APPLICATION,
    STOP_APPLICATION_SET,
    automated,
    generates_automated,
    stop_order,
)
from gitops_infra.automation._cluster.workloads import engine_pod


def _application(policy: Any, **metadata: Any) -> dict[str, Any]:
    return {"metadata": {"namespace": "argocd", "name": "app", **metadata}, "spec": {"syncPolicy": policy}}


@pytest.mark.parametrize(
    ("policy", "on"),
    [
        ({"automated": {"prune": True, "selfHeal": True}}, True),
        ({"automated": {}}, True),  # `automated: {}` turns it on, prune and self-heal off
        ({"automated": {"enabled": True}}, True),
        ({"automated": {"enabled": False, "selfHeal": True}}, False),  # Argo CD 3.x's switch
        ({"automated": None}, False),
        ({"syncOptions": ["CreateNamespace=true"]}, False),
        (None, False),
        ("automated", False),  # not a mapping: nothing Argo CD would act on
    ],
)
def test_an_application_syncs_on_its_own_when_its_policy_has_automated_not_disabled(
    policy: Any, on: bool
) -> None:
    assert automated(_application(policy)) is on


def test_an_application_set_is_stopped_once_its_template_is_not_automated() -> None:
    template = {"spec": {"syncPolicy": {"automated": {"selfHeal": True}}}}
    assert generates_automated({"spec": {"template": template}})
    assert generates_automated(
        {"spec": {"template": template, "syncPolicy": {"applicationsSync": "create-only"}}}
    )
    assert not generates_automated({"spec": {"template": {"spec": {}}}})
    assert not generates_automated(
        {"spec": {"template": {"spec": {"syncPolicy": {"automated": {"enabled": False}}}}}}
    )
    assert not generates_automated({"spec": {}})


def test_an_application_set_is_patched_in_its_template_only() -> None:
    # Its policy stays as git has it: the root puts the template back from git, and the controller then
    # updates its Applications again (a policy that updates nothing would keep them stopped).
    application_set: dict[str, Any] = {
        "spec": {
            "template": {"spec": {"syncPolicy": {"automated": {"prune": True}, "retry": {"limit": 2}}}},
            "syncPolicy": {"preserveResourcesOnDeletion": True},
        }
    }
    _merge(application_set, STOP_APPLICATION_SET)
    assert not generates_automated(application_set)
    assert application_set["spec"]["syncPolicy"] == {"preserveResourcesOnDeletion": True}
    assert application_set["spec"]["template"]["spec"]["syncPolicy"] == {"retry": {"limit": 2}}


def test_an_application_s_automated_sync_is_removed_not_disabled() -> None:
    # Removed: an Argo CD before 3.0 prunes `enabled` from the object and keeps syncing.
    assert STOP_APPLICATION == {"spec": {"syncPolicy": {"automated": None}}}
    stopped = _application({"automated": {"prune": True}, "retry": {"limit": 5}})
    _merge(stopped, STOP_APPLICATION)
    assert not automated(stopped) and stopped["spec"]["syncPolicy"] == {"retry": {"limit": 5}}


def _merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    """RFC 7386, as the API server applies a merge patch."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            child = target.get(key)
            if not isinstance(child, dict):
                child = target[key] = {}
            _merge(child, value)
        else:
            target[key] = value


def test_roots_are_stopped_before_what_argo_cd_applied_or_an_application_set_made() -> None:
    tracked = _application(None, name="a-child", annotations={"argocd.argoproj.io/tracking-id": "root:..."})
    labelled = _application(None, name="b-child", labels={"app.kubernetes.io/instance": "root"})
    owned = _application(None, name="c-child", ownerReferences=[{"kind": "ApplicationSet", "name": "set"}])
    root = _application(None, name="z-root")
    ordered = sorted([tracked, labelled, owned, root], key=stop_order)
    assert [a["metadata"]["name"] for a in ordered] == ["z-root", "a-child", "b-child", "c-child"]


@pytest.mark.parametrize(
    ("labels", "image", "engine"),
    [
        ({"app.kubernetes.io/part-of": "argocd"}, "redis:7", True),  # the argo-cd chart's label
        ({}, "quay.io/argoproj/argocd:v3.4.4", True),
        ({"app.kubernetes.io/part-of": "flux"}, "busybox", True),
        ({}, "ghcr.io/fluxcd/source-controller:v1.8.5", True),
        ({}, "postgres:17", False),
        ({}, "example.com/argoproj/argocd-lookalike:1", False),
    ],
)
def test_a_pod_of_either_engine_keeps_the_claims_it_mounts(
    labels: dict[str, str], image: str, engine: bool
) -> None:
    pod = {"metadata": {"labels": labels}, "spec": {"containers": [{"image": image}]}}
    assert engine_pod(pod) is engine
