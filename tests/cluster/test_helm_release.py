"""HelmRelease for real: a chart the test packages, served from a ``HelmRepository`` on loopback, released
by the real helm-controller (v1.6.3, Flux 2.9.4's, on Helm 4) from a ``HelmRelease`` committed to the
fleet repository. It installs, upgrades on a values change, and rolls back a failed upgrade; and the
GitOps layer (``drift``, as JSON, text and Markdown) says so: a healthy release is no problem, the
rolled-back one is, in helm-controller's words.

No container runs here (kwok marks pods Running), so the chart makes a ConfigMap, which is what Helm
applies and what the test reads back: its data is the release's values and chart version.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gitops_infra.automation import up
from gitops_infra.cli._render.escape import one_line
from gitops_infra.cli._render.markdown import code
from gitops_infra.components.flux import FLUX_SYNC_NAME
from gitops_infra.local import FleetServer

from ._charts import chart, release_manifests, serve_repository
from ._loopback import loopback
from .conftest import LocalStack, wait_until

pytestmark = pytest.mark.cluster

CHART = "greeting"
SOURCE = ("source.toolkit.fluxcd.io", "v1", "gitrepositories")
HELM_RELEASE = ("helm.toolkit.fluxcd.io", "v2", "helmreleases")
GOOD_TEMPLATE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  greeting: {{ .Values.greeting | quote }}
  chart: {{ .Chart.Version | quote }}
"""
# The next chart version renders a ConfigMap the API server refuses (its name is no DNS name): Helm
# records the upgrade, fails it, and helm-controller's remediation rolls it back.
BAD_TEMPLATE = GOOD_TEMPLATE.replace("name: {{ .Release.Name }}", "name: {{ .Release.Name }}-Not_Valid")


def _reconcile_now(stack: LocalStack) -> None:
    stamp = datetime.datetime.now(datetime.UTC).isoformat()
    group, version, plural = SOURCE
    client.CustomObjectsApi(stack.api).patch_namespaced_custom_object(
        group,
        version,
        stack.flux_namespace,
        plural,
        FLUX_SYNC_NAME,
        {"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": stamp}}},
    )


def _commit(stack: LocalStack, fleet: FleetServer, url: str, version: str, greeting: str) -> None:
    fleet.commit(
        {
            f"{stack.fleet_path}/greeting.yaml": release_manifests(
                CHART,
                url=url,
                version=version,
                namespace=stack.flux_namespace,
                target_namespace=stack.service_namespace,
                values={"greeting": greeting},
            )
        },
        f"the greeting release: chart {version}, {greeting}",
    )
    _reconcile_now(stack)


def _release(stack: LocalStack) -> dict[str, Any]:
    """The HelmRelease, or ``{}`` until the root Kustomization has applied it."""
    group, version, plural = HELM_RELEASE
    try:
        found: dict[str, Any] = client.CustomObjectsApi(stack.api).get_namespaced_custom_object(
            group, version, stack.flux_namespace, plural, CHART
        )
    except ApiException as exc:
        if exc.status == 404:
            return {}
        raise
    return found


def _condition(release: dict[str, Any], kind: str) -> dict[str, Any] | None:
    conditions = release.get("status", {}).get("conditions", [])
    return next((c for c in conditions if c["type"] == kind), None)


def _ready_at(stack: LocalStack, version: int) -> dict[str, Any] | None:
    """The HelmRelease once it is Ready for its current spec with Helm's release ``version`` deployed."""
    release = _release(stack)
    ready = _condition(release, "Ready")
    if not release:
        return None
    history = release.get("status", {}).get("history") or [{}]
    if (
        ready
        and ready["status"] == "True"
        and ready.get("observedGeneration") == release["metadata"]["generation"]
        and history[0].get("version") == version
    ):
        return release
    return None


def _config_map(stack: LocalStack) -> dict[str, str] | None:
    core = client.CoreV1Api(stack.api)
    found = core.list_namespaced_config_map(stack.service_namespace, field_selector=f"metadata.name={CHART}")
    return dict(found.items[0].data) if found.items else None


def _helm_records(stack: LocalStack) -> dict[int, str]:
    """Helm's own record of the release (its storage Secrets): each revision and its status."""
    secrets = client.CoreV1Api(stack.api).list_namespaced_secret(
        stack.service_namespace, label_selector=f"owner=helm,name={CHART}"
    )
    return {int(s.metadata.labels["version"]): s.metadata.labels["status"] for s in secrets.items}


def _gitops(stack: LocalStack, *args: str) -> Any:
    result = stack.cli("drift", "local", "--layers", "gitops", *args)
    return result


def test_a_helm_release_installs_upgrades_and_rolls_back_a_failed_upgrade_and_drift_says_so(
    local_stack: LocalStack, fleet: FleetServer
) -> None:
    up("local", options=local_stack.options)
    with loopback() as charts:
        versions = {"0.1.0": GOOD_TEMPLATE, "0.2.0": BAD_TEMPLATE}
        serve_repository(
            charts,
            CHART,
            {v: chart(CHART, v, {"configmap.yaml": t}, {"greeting": "hello"}) for v, t in versions.items()},
        )

        # Install.
        _commit(local_stack, fleet, charts.url, "0.1.0", "hello")
        installed = wait_until(lambda: _ready_at(local_stack, 1), "the HelmRelease to install")
        assert _config_map(local_stack) == {"greeting": "hello", "chart": "0.1.0"}
        assert installed["status"]["history"][0]["chartVersion"] == "0.1.0"
        assert charts.requests("GET", "/index.yaml") and charts.requests("GET", f"/{CHART}-0.1.0.tgz")
        # A healthy HelmRelease is no problem of the GitOps layer.
        healthy = _gitops(local_stack, "--json")
        assert healthy.exit_code == 0, healthy.output
        assert json.loads(healthy.stdout)["gitops"]["failing"] == [], healthy.output

        # Upgrade: a values change committed to the fleet.
        _commit(local_stack, fleet, charts.url, "0.1.0", "hi")
        wait_until(lambda: _ready_at(local_stack, 2), "the HelmRelease to upgrade")
        assert _config_map(local_stack) == {"greeting": "hi", "chart": "0.1.0"}
        assert _helm_records(local_stack) == {1: "superseded", 2: "deployed"}

        # A failed upgrade: chart 0.2.0 renders an object the API server refuses. Rolled back to revision 2.
        _commit(local_stack, fleet, charts.url, "0.2.0", "hey")

        def rolled_back() -> dict[str, Any] | None:
            release = _release(local_stack)
            remediated = _condition(release, "Remediated")
            if (
                remediated
                and remediated["status"] == "True"
                and _helm_records(local_stack).get(4) == "deployed"
            ):
                return release
            return None

        release = wait_until(rolled_back, "the failed upgrade to be rolled back")

    # Helm's record: 3 failed (chart 0.2.0), 4 deployed (a rollback to 2's chart and values).
    assert _helm_records(local_stack) == {1: "superseded", 2: "superseded", 3: "failed", 4: "deployed"}
    history = {h["version"]: h for h in release["status"]["history"]}
    assert (history[3]["status"], history[3]["chartVersion"]) == ("failed", "0.2.0"), history
    assert (history[4]["status"], history[4]["chartVersion"]) == ("deployed", "0.1.0"), history
    assert history[4]["configDigest"] == history[2]["configDigest"], history
    assert _config_map(local_stack) == {"greeting": "hi", "chart": "0.1.0"}
    released = _condition(release, "Released")
    assert released is not None and released["status"] == "False" and released["reason"] == "UpgradeFailed"
    assert "Not_Valid" in released["message"], released
    ready = _condition(release, "Ready")
    assert ready is not None and ready["status"] == "False", ready
    assert ready["reason"] == "RollbackSucceeded", ready

    # The GitOps layer: the rolled-back HelmRelease is a problem, in helm-controller's words.
    name = f"HelmRelease {local_stack.flux_namespace}/{CHART}"
    said = f"{name} is not Ready ({ready['reason']}): {ready['message']}"
    drift = _gitops(local_stack, "--json")
    assert drift.exit_code == 2, drift.output
    gitops = json.loads(drift.stdout)["gitops"]
    assert gitops["healthy"] is False and gitops["problems"] == [said], gitops
    (failing,) = gitops["failing"]
    assert (failing["kind"], failing["namespace"], failing["name"]) == (
        "HelmRelease",
        local_stack.flux_namespace,
        CHART,
    )
    assert (failing["ready"], failing["reason"], failing["message"]) == (
        False,
        ready["reason"],
        ready["message"],
    )
    text = _gitops(local_stack)
    assert text.exit_code == 2 and said in text.output, text.output
    markdown = _gitops(local_stack, "--format", "markdown")
    assert markdown.exit_code == 2, markdown.output
    assert f"- {code(said)}" in markdown.output, markdown.output
    assert f"| HelmRelease | `{local_stack.flux_namespace}/{CHART}` | no |" in markdown.output, (
        markdown.output
    )


FAILING = "failing"
# What anyone who can write to the fleet can make a chart say (its values): Markdown, HTML, a CI workflow
# command on a line of its own, a terminal escape.
HOSTILE = (
    "see [this](https://evil.example) <img src=x onerror=alert(1)> **now** `tick` | pipe"
    "\n::error::forged ##[add-mask]x \x1b[31mred"
)


def test_a_helm_release_whose_install_fails_is_a_problem_in_helm_controller_s_words_escaped(
    local_stack: LocalStack, fleet: FleetServer
) -> None:
    up("local", options=local_stack.options)
    with loopback() as charts:
        serve_repository(
            charts, FAILING, {"0.1.0": chart(FAILING, "0.1.0", {"fail.yaml": "{{ fail .Values.why }}\n"}, {})}
        )
        fleet.commit(
            {
                f"{local_stack.fleet_path}/failing.yaml": release_manifests(
                    FAILING,
                    url=charts.url,
                    version="0.1.0",
                    namespace=local_stack.flux_namespace,
                    target_namespace=local_stack.service_namespace,
                    values={"why": HOSTILE},
                )
            },
            "a release whose chart fails, in hostile words",
        )
        _reconcile_now(local_stack)

        def failed() -> dict[str, Any] | None:
            group, version, plural = HELM_RELEASE
            try:
                release: dict[str, Any] = client.CustomObjectsApi(
                    local_stack.api
                ).get_namespaced_custom_object(group, version, local_stack.flux_namespace, plural, FAILING)
            except ApiException as exc:
                if exc.status == 404:
                    return None
                raise
            ready = _condition(release, "Ready")
            return ready if ready and ready["status"] == "False" and "forged" in ready["message"] else None

        ready = wait_until(failed, "helm-controller to fail the install")

    assert ready["reason"] == "InstallFailed", ready
    said = (
        f"HelmRelease {local_stack.flux_namespace}/{FAILING} is not Ready (InstallFailed): {ready['message']}"
    )
    # helm-controller tries the install again after a backoff (Progressing meanwhile): each form is read
    # while the failure stands.
    drift = wait_until(
        lambda: (
            (found := _gitops(local_stack, "--json")).exit_code == 2
            and "InstallFailed" in found.stdout
            and found
        ),
        "the failure in JSON",
    )
    gitops = json.loads(drift.stdout)["gitops"]
    (failing,) = gitops["failing"]
    assert (failing["kind"], failing["name"], failing["reason"]) == ("HelmRelease", FAILING, "InstallFailed")
    assert failing["message"] == ready["message"] and "\n::error::forged" in failing["message"], failing
    assert gitops["problems"] == [said]
    text = wait_until(
        lambda: (found := _gitops(local_stack)).exit_code == 2 and one_line(said) in found.output and found,
        "the failure in text",
    )
    markdown = wait_until(
        lambda: (
            (found := _gitops(local_stack, "--format", "markdown")).exit_code == 2
            and f"- {code(said)}" in found.output
            and found
        ),
        "the failure in Markdown",
    )
    for output in (drift.output, text.output, markdown.output):
        assert "\x1b" not in output and "##[" not in output
        assert not [line for line in output.splitlines() if line.lstrip().startswith("::")], output
