"""The GitOps layer on the real API server and Flux's real controllers: drift, status and promotion.

Each scenario changes the cluster the way it goes wrong in life (a Kustomization suspended by hand, a
manifest that does not apply, a git server that went away), then runs the CLI a CI job would run, and
checks what it says, its exit code, that no credential is in its output, and that it wrote no state.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from pulumi import automation as auto

from gitops_infra.automation import Layer, detect_drift, status, up
from gitops_infra.automation._engine.compat import SECRET_SIG, SECRET_SIG_KEY
from gitops_infra.components.flux import FLUX_SYNC_NAME
from gitops_infra.local import DeployKeyPair, FleetServer, LocalCluster, free_port

from ..support import workspace
from .conftest import LocalStack, gone, wait_until

pytestmark = pytest.mark.cluster

SOURCE = ("source.toolkit.fluxcd.io", "v1", "gitrepositories")
KUSTOMIZE = ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations")
BROKEN = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\n  namespace: default\n"
    "data:\n  a: b\n"
)


def _objects(stack: LocalStack) -> Any:
    return client.CustomObjectsApi(stack.api)


def _get(stack: LocalStack, kind: tuple[str, str, str]) -> dict[str, Any]:
    group, version, plural = kind
    found: dict[str, Any] = _objects(stack).get_namespaced_custom_object(
        group, version, stack.flux_namespace, plural, FLUX_SYNC_NAME
    )
    return found


def _patch(stack: LocalStack, kind: tuple[str, str, str], body: dict[str, Any]) -> None:
    group, version, plural = kind
    _objects(stack).patch_namespaced_custom_object(
        group, version, stack.flux_namespace, plural, FLUX_SYNC_NAME, body
    )


def _reconcile_now(stack: LocalStack) -> None:
    """What ``flux reconcile source git`` does: ask for a fetch now, rather than at the next interval."""
    stamp = datetime.datetime.now(datetime.UTC).isoformat()
    _patch(stack, SOURCE, {"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": stamp}}})


def _ready(stack: LocalStack, kind: tuple[str, str, str]) -> str | None:
    conditions = _get(stack, kind).get("status", {}).get("conditions", [])
    return next((c["status"] for c in conditions if c["type"] == "Ready"), None)


def _checkpoint(stack: LocalStack) -> dict[str, Any]:
    """The stack's state without the secrets (what `writes no state` is checked against)."""
    exported = stack.raw_stack().export_stack()
    return {"deployment": exported.deployment, "version": exported.version}


def _gitops(result: Result) -> dict[str, Any]:
    document = json.loads(result.stdout)
    assert isinstance(document["gitops"], dict), document
    gitops: dict[str, Any] = document["gitops"]
    return gitops


def test_all_healthy_is_exit_0_with_no_problem_in_either_layer(
    local_stack: LocalStack, no_credentials: Callable[[str], None]
) -> None:
    up("local", options=local_stack.options)
    source = _get(local_stack, SOURCE)

    result = local_stack.cli("drift", "local", "--json")

    assert result.exit_code == 0, result.output
    gitops = _gitops(result)
    assert gitops["healthy"] is True and gitops["problems"] == [] and gitops["failing"] == []
    (reported,) = gitops["sources"]
    assert reported["ready"] is True and reported["stale"] is False
    assert reported["revision"] == source["status"]["artifact"]["revision"]
    (sync,) = gitops["syncs"]
    assert sync["name"] == FLUX_SYNC_NAME and sync["namespace"] == local_stack.flux_namespace
    assert sync["applied_revision"] == sync["source_revision"] == reported["revision"]
    assert sync["lag"] is False and sync["suspended"] is False
    no_credentials(result.output)

    # The text and Markdown say so too, and `--layers iac` leaves the GitOps layer out.
    text = local_stack.cli("drift", "local")
    assert text.exit_code == 0 and "gitops: healthy" in text.output, text.output
    iac = local_stack.cli("drift", "local", "--layers", "iac", "--json")
    assert iac.exit_code == 0 and json.loads(iac.stdout)["gitops"] is None
    status = local_stack.cli("status", "local", "--json")
    assert status.exit_code == 0 and _gitops(status)["healthy"] is True, status.output


def test_a_kustomization_suspended_out_of_band_is_exit_2_and_writes_no_state(
    local_stack: LocalStack, no_credentials: Callable[[str], None]
) -> None:
    up("local", options=local_stack.options)
    before = _checkpoint(local_stack)
    _patch(local_stack, KUSTOMIZE, {"spec": {"suspend": True}})

    result = local_stack.cli("drift", "local", "--layers", "gitops", "--json")

    assert result.exit_code == 2, result.output
    gitops = _gitops(result)
    assert gitops["healthy"] is False
    name = f"Kustomization {local_stack.flux_namespace}/{FLUX_SYNC_NAME}"
    assert f"{name} is suspended" in gitops["problems"]
    assert gitops["syncs"][0]["suspended"] is True
    text = local_stack.cli("drift", "local")
    assert text.exit_code == 2 and f"{name} is suspended" in text.output, text.output
    no_credentials(result.output + text.output)
    assert _checkpoint(local_stack) == before


def test_a_manifest_that_does_not_apply_is_reported_not_ready_in_fluxs_words(
    local_stack: LocalStack, fleet: FleetServer, no_credentials: Callable[[str], None]
) -> None:
    up("local", options=local_stack.options)
    fleet.commit({f"{local_stack.fleet_path}/broken.yaml": BROKEN}, "a manifest the API server refuses")
    _reconcile_now(local_stack)
    wait_until(lambda: _ready(local_stack, KUSTOMIZE) == "False", "the Kustomization to fail")
    ready = next(c for c in _get(local_stack, KUSTOMIZE)["status"]["conditions"] if c["type"] == "Ready")

    result = local_stack.cli("drift", "local", "--json")

    assert result.exit_code == 2, result.output
    document = json.loads(result.stdout)
    assert document["has_drift"] is False and document["healthy"] is False
    (sync,) = document["gitops"]["syncs"]
    assert sync["ready"] is False and sync["reason"] == ready["reason"]
    assert sync["message"] == ready["message"] and "Not_A_Valid_Name" in sync["message"]
    name = f"Kustomization {local_stack.flux_namespace}/{FLUX_SYNC_NAME}"
    assert f"{name} is not Ready ({ready['reason']}): {ready['message']}" in document["gitops"]["problems"]
    markdown = local_stack.cli("drift", "local", "--format", "markdown")
    assert markdown.exit_code == 2 and "#### GitOps layer: " in markdown.output, markdown.output
    no_credentials(result.output + markdown.output)


def test_a_fleet_server_that_went_away_leaves_the_source_not_ready(
    local_stack: LocalStack,
    deploy_key: DeployKeyPair,
    tmp_path: Path,
    no_credentials: Callable[[str], None],
) -> None:
    own = FleetServer(tmp_path / "own-fleet", deploy_key).start()
    try:
        own.commit({f"{local_stack.fleet_path}/README.md": "Synced until the server stops.\n"}, "the path")
        local_stack.set_all({"git.url": own.url, "git.knownHosts": own.known_hosts})
        local_stack.commit("sync from a fleet server of this test's own")
        up("local", options=local_stack.options)
    finally:
        own.stop()
    _reconcile_now(local_stack)
    wait_until(lambda: _ready(local_stack, SOURCE) == "False", "the source to fail its fetch")

    result = local_stack.cli("drift", "local", "--layers", "gitops", "--json")

    assert result.exit_code == 2, result.output
    gitops = _gitops(result)
    (source,) = gitops["sources"]
    assert source["ready"] is False and source["reason"], source
    name = f"GitRepository {local_stack.flux_namespace}/{FLUX_SYNC_NAME}"
    assert any(problem.startswith(f"{name} is not Ready") for problem in gitops["problems"]), gitops
    no_credentials(result.output)


def _ready_condition(obj: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == "Ready"), None)


def test_a_source_spec_change_that_fails_shows_source_controller_s_words_not_progressing_or_stale(
    local_stack: LocalStack, second_stack: str, no_credentials: Callable[[str], None]
) -> None:
    up("local", options=local_stack.options)
    before = _get(local_stack, SOURCE)
    # A branch that does not exist; and an interval of 2 s, so that 3 intervals pass within the test: a
    # source whose controller did not answer its new spec for that long would be stale.
    _patch(local_stack, SOURCE, {"spec": {"ref": {"branch": "no-such-branch"}, "interval": "2s"}})
    changed = datetime.datetime.now(datetime.UTC)

    def refused() -> dict[str, Any] | None:
        obj = _get(local_stack, SOURCE)
        ready = _ready_condition(obj)
        generation = obj["metadata"]["generation"]
        if ready and ready["status"] == "False" and ready.get("observedGeneration") == generation:
            return obj
        return None

    failed = wait_until(refused, "source-controller to refuse the branch")
    # As source-controller leaves it: the spec's generation on the condition, not in the status.
    assert failed["status"]["observedGeneration"] == before["status"]["observedGeneration"]
    assert failed["status"]["observedGeneration"] < failed["metadata"]["generation"]
    ready = _ready_condition(failed)
    assert ready is not None and "no-such-branch" in ready["message"], ready
    reason, message = ready["reason"], ready["message"]
    time.sleep(max(0.0, 7 - (datetime.datetime.now(datetime.UTC) - changed).total_seconds()))
    name = f"GitRepository {local_stack.flux_namespace}/{FLUX_SYNC_NAME}"
    said = f"{name} is not Ready ({reason}): {message}"

    # The library: drift's GitOps layer and status both give source-controller's verdict.
    drift = detect_drift("local", options=local_stack.options, layers=(Layer.GITOPS,))
    stack_status = status("local", options=local_stack.options)
    for layer in (drift.gitops, stack_status.gitops):
        assert layer is not None and not layer.healthy
        (source,) = layer.sources
        assert (source.ready, source.reason, source.message, source.stale) == (False, reason, message, False)
        assert said in layer.problems
        assert not [p for p in layer.problems if "stale" in p or "Progressing" in p], layer.problems

    # The CLI: drift and status, as JSON, text and Markdown.
    drift_json = local_stack.cli("drift", "local", "--json")
    assert drift_json.exit_code == 2, drift_json.output
    status_json = local_stack.cli("status", "local", "--json")
    assert status_json.exit_code == 0, status_json.output
    for result in (drift_json, status_json):
        gitops = _gitops(result)
        (source,) = gitops["sources"]
        assert (source["ready"], source["reason"], source["message"]) == (False, reason, message), source
        assert source["stale"] is False and said in gitops["problems"], gitops
    outputs = [drift_json.output, status_json.output]
    for args in (("drift", "local", "--layers", "gitops"), ("status", "local")):
        for output_format in ("text", "markdown"):
            result = local_stack.cli(*args, "--format", output_format)
            assert said in result.output, result.output
            assert "Progressing" not in result.output and "stale" not in result.output, result.output
            outputs.append(result.output)

    # And promotion refuses in those words.
    refused_promotion = local_stack.cli(
        "promote", "local", second_stack, "--require-healthy", "--yes", "--json"
    )
    assert refused_promotion.exit_code == 1, refused_promotion.output
    error = json.loads(refused_promotion.stdout)["error"]
    assert error["type"] == "PromotionError" and f"--require-healthy: {said}" in error["message"], error
    outputs.append(refused_promotion.output)
    no_credentials("".join(outputs))


def test_promotion_is_refused_while_the_source_is_not_ready_and_allowed_once_it_recovers(
    local_stack: LocalStack,
    second_stack: str,
    fleet: FleetServer,
    cluster: LocalCluster,
    no_credentials: Callable[[str], None],
) -> None:
    up("local", options=local_stack.options)
    fleet.commit({f"{local_stack.fleet_path}/broken.yaml": BROKEN}, "a manifest the API server refuses")
    _reconcile_now(local_stack)
    wait_until(lambda: _ready(local_stack, KUSTOMIZE) == "False", "the source's Kustomization to fail")

    refused = local_stack.cli("promote", "local", second_stack, "--require-healthy", "--yes", "--json")

    assert refused.exit_code == 1, refused.output
    error = json.loads(refused.stdout)["error"]
    assert error["type"] == "PromotionError"
    name = f"Kustomization {local_stack.flux_namespace}/{FLUX_SYNC_NAME}"
    assert "--require-healthy" in error["message"] and f"{name} is not Ready" in error["message"], error
    target = auto.Stack.select(second_stack, workspace(local_stack.root, local_stack.env))
    assert target.history() == []  # nothing ran on the target
    too_old = local_stack.cli("promote", "local", second_stack, "--max-age", "1s", "--yes", "--json")
    assert too_old.exit_code == 1 and "--max-age 1s" in json.loads(too_old.stdout)["error"]["message"], (
        too_old.output
    )

    fixed = fleet.commit(
        {f"{local_stack.fleet_path}/broken.yaml": BROKEN.replace("Not_A_Valid_Name", "fixed")}, "fix"
    )
    _reconcile_now(local_stack)
    wait_until(
        lambda: (
            _ready(local_stack, KUSTOMIZE) == "True"
            and _get(local_stack, KUSTOMIZE)["status"].get("lastAppliedRevision") == f"main@sha1:{fixed}"
        ),
        "the source's Kustomization to recover",
    )

    allowed = local_stack.cli(
        "promote",
        "local",
        second_stack,
        "--require-healthy",
        "--max-age",
        "1h",
        "--yes",
        "--json",
    )

    assert allowed.exit_code == 0, allowed.output
    promoted = json.loads(allowed.stdout)
    evidence = promoted["evidence"]
    assert evidence["source"] == "local" and evidence["commit"] == promoted["commit"]
    assert 0 <= evidence["age_seconds"] < 3600 and evidence["max_age_seconds"] == 3600
    assert evidence["gitops"]["healthy"] is True
    assert evidence["gitops"]["syncs"][0]["applied_revision"] == f"main@sha1:{fixed}"
    assert evidence["gitops"]["sources"][0]["revision"] == f"main@sha1:{fixed}"
    no_credentials(refused.output + allowed.output)


def _point_provider_at(stack: auto.Stack, kubeconfig: str) -> None:
    """Rewrite the stack's Kubernetes provider to reach ``kubeconfig``: a cluster that went away.

    The value goes in as a secret in plaintext, as ``pulumi stack export --show-secrets`` writes one;
    the import encrypts it.
    """
    exported = stack.export_stack()
    deployment = exported.deployment
    secret = {SECRET_SIG_KEY: SECRET_SIG, "plaintext": json.dumps(kubeconfig)}
    for resource in deployment["resources"]:
        if resource["type"] == "pulumi:providers:kubernetes":
            for side in ("inputs", "outputs"):
                if "kubeconfig" in resource.get(side, {}):
                    resource[side]["kubeconfig"] = secret
    stack.import_stack(auto.Deployment(version=exported.version, deployment=deployment))


def test_drift_all_shows_both_layers_and_an_unreachable_cluster_stops_no_other_stack(
    local_stack: LocalStack, second_stack: str, cluster: LocalCluster, no_credentials: Callable[[str], None]
) -> None:
    up("local", options=local_stack.options)
    up(second_stack, options=local_stack.options)
    gone = cluster.kubeconfig.replace(cluster.server, f"https://127.0.0.1:{free_port()}")
    assert gone != cluster.kubeconfig
    target = auto.Stack.select(second_stack, workspace(local_stack.root, local_stack.env))
    _point_provider_at(target, gone)
    try:
        # The GitOps layer alone: the unreachable cluster is that layer's error, with the reason.
        gitops = local_stack.cli("drift", "--all", "--layers", "gitops", "--json")
        # Both layers: the provider cannot refresh the target's Kubernetes objects either.
        both = local_stack.cli("drift", "--all", "--json")
        text = local_stack.cli("drift", "--all")
    finally:
        _point_provider_at(target, cluster.kubeconfig)  # so that the fixture's destroy reaches the cluster

    assert gitops.exit_code == 2, gitops.output
    by_stack = {entry["stack"]: entry for entry in json.loads(gitops.stdout)["stacks"]}
    assert by_stack["local"]["report"]["gitops"]["healthy"] is True
    layer = by_stack[second_stack]["report"]["gitops"]
    assert layer["healthy"] is False and "127.0.0.1" in layer["error"] and "refused" in layer["error"], layer
    assert layer["problems"] == [f"the cluster could not be read: {layer['error']}"]

    assert both.exit_code == 1, both.output  # no drift anywhere, and one stack could not be checked
    by_stack = {entry["stack"]: entry for entry in json.loads(both.stdout)["stacks"]}
    assert set(by_stack) == {"local", second_stack}
    local = by_stack["local"]
    assert local["error"] is None and local["report"]["has_drift"] is False
    assert local["report"]["gitops"]["healthy"] is True
    assert "unreachable cluster" in by_stack[second_stack]["error"]["message"], by_stack[second_stack]
    assert "local: no drift; gitops: healthy" in text.output, text.output
    no_credentials(gitops.output + both.output + text.output)


# -- a Flux older (or newer) than the pinned one, under `flux.install: external` ---------------------------

HELM_RELEASES = ("helm.toolkit.fluxcd.io", "helmreleases")
HELM_RELEASE_CRD = "helmreleases.helm.toolkit.fluxcd.io"


@contextlib.contextmanager
def _helm_release_api(api: Any, versions: tuple[str, ...]) -> Iterator[None]:
    """The HelmRelease CRD served at ``versions`` only (the first stores), as helm-controller's own CRD
    of a Flux of that time serves it (only ``v2beta1`` before Flux 2.2), in place of the harness's (Flux
    2.9's, served at ``v2`` only), which is put back afterwards; the stand-in's objects go with it. Its
    schema is left open: what is read of a HelmRelease is its status, which no controller writes here
    (the harness runs no helm-controller), so the test writes it, as helm-controller does."""
    group, plural = HELM_RELEASES
    extensions = client.ApiextensionsV1Api(api)
    harness = _remove_crd(extensions, HELM_RELEASE_CRD)
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    try:
        extensions.create_custom_resource_definition(
            {
                "metadata": {"name": HELM_RELEASE_CRD},
                "spec": {
                    "group": group,
                    "scope": "Namespaced",
                    "names": {"plural": plural, "singular": "helmrelease", "kind": "HelmRelease"},
                    "versions": [
                        {
                            "name": version,
                            "served": True,
                            "storage": version == versions[0],
                            "schema": schema,
                            "subresources": {"status": {}},
                        }
                        for version in versions
                    ],
                },
            }
        )

        def discovered() -> bool:
            # Established first, then listed by API discovery, which is how the read finds the version.
            found = [
                r.name
                for version in versions
                for r in client.CustomObjectsApi(api).get_api_resources(group, version).resources
            ]
            return found.count(plural) == len(versions)

        wait_until(lambda: _no_404(discovered), "the HelmRelease CRD to be served and discovered")
        yield
    finally:
        _remove_crd(extensions, HELM_RELEASE_CRD)
        if harness is not None:
            extensions.create_custom_resource_definition(harness)
            wait_until(lambda: _established(extensions, HELM_RELEASE_CRD), "the HelmRelease CRD to be back")


def _remove_crd(extensions: Any, name: str) -> dict[str, Any] | None:
    """Delete the CRD ``name`` and wait until it is gone; what it was (to make again), None if missing."""
    try:
        crd = extensions.read_custom_resource_definition(name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    extensions.delete_custom_resource_definition(name)
    wait_until(lambda: gone(extensions.read_custom_resource_definition, name), f"the CRD {name} to be gone")
    made: dict[str, Any] = extensions.api_client.sanitize_for_serialization(crd)
    made.pop("status", None)
    made["metadata"] = {"name": name, "labels": made["metadata"].get("labels", {})}
    return made


def _established(extensions: Any, name: str) -> bool:
    status = extensions.read_custom_resource_definition(name).status
    return any(c.type == "Established" and c.status == "True" for c in (status.conditions or []))


def _no_404(check: Callable[[], bool]) -> bool:
    try:
        return check()
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise


HELM_FAILED = (
    "Helm install failed for release apps/podinfo with chart podinfo@6.5.4: context deadline exceeded"
)


def _failing_helm_release(stack: LocalStack, version: str) -> str:
    """A HelmRelease at ``version`` whose install failed, its status as helm-controller writes it (a
    stamped ``Ready=False`` with its reason and message); what the GitOps layer should say of it."""
    group, plural = HELM_RELEASES
    objects, namespace = _objects(stack), stack.flux_namespace
    made = objects.create_namespaced_custom_object(
        group,
        version,
        namespace,
        plural,
        {
            "apiVersion": f"{group}/{version}",
            "kind": "HelmRelease",
            "metadata": {"name": "podinfo", "namespace": namespace},
            "spec": {
                "interval": "5m",
                "chart": {
                    "spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "podinfo"}}
                },
            },
        },
    )
    generation = made["metadata"]["generation"]
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    failed = {
        "type": "Ready",
        "status": "False",
        "reason": "InstallFailed",
        "message": HELM_FAILED,
        "observedGeneration": generation,
        "lastTransitionTime": stamp,
    }
    objects.patch_namespaced_custom_object_status(
        group, version, namespace, plural, "podinfo", {"status": {"conditions": [failed]}}
    )
    return f"HelmRelease {namespace}/podinfo is not Ready (InstallFailed): {HELM_FAILED}"


def test_a_failing_helm_release_of_a_flux_serving_only_v2beta1_fails_drift_status_and_promotion(
    local_stack: LocalStack, second_stack: str, cluster: LocalCluster, no_credentials: Callable[[str], None]
) -> None:
    up("local", options=local_stack.options)
    with _helm_release_api(local_stack.api, ("v2beta1",)):
        said = _failing_helm_release(local_stack, "v2beta1")

        drift = local_stack.cli("drift", "local", "--layers", "gitops", "--json")
        status_json = local_stack.cli("status", "local", "--json")
        promotion = local_stack.cli("promote", "local", second_stack, "--require-healthy", "--yes", "--json")
        text = local_stack.cli("drift", "local")

    assert drift.exit_code == 2, drift.output
    assert status_json.exit_code == 0, status_json.output
    for result in (drift, status_json):
        gitops = _gitops(result)
        assert gitops["healthy"] is False and gitops["problems"] == [said], gitops
        (failing,) = gitops["failing"]
        assert (failing["kind"], failing["name"], failing["ready"]) == ("HelmRelease", "podinfo", False)
        assert (failing["reason"], failing["message"]) == ("InstallFailed", HELM_FAILED), failing
    assert text.exit_code == 2 and said in text.output, text.output

    assert promotion.exit_code == 1, promotion.output
    error = json.loads(promotion.stdout)["error"]
    assert error["type"] == "PromotionError" and f"--require-healthy: {said}" in error["message"], error
    target = auto.Stack.select(second_stack, workspace(local_stack.root, local_stack.env))
    assert target.history() == []  # nothing ran on the target
    no_credentials(drift.output + status_json.output + promotion.output + text.output)


def test_a_helm_release_served_only_at_a_version_newer_than_the_known_ones_is_read_at_it(
    local_stack: LocalStack, no_credentials: Callable[[str], None]
) -> None:
    up("local", options=local_stack.options)
    healthy = local_stack.cli("drift", "local", "--layers", "gitops", "--json")
    assert healthy.exit_code == 0 and _gitops(healthy)["failing"] == [], healthy.output  # no HelmRelease
    # A HelmRelease API after v2 (none exists yet): the newest the cluster serves is read.
    with _helm_release_api(local_stack.api, ("v3alpha1", "v3")):
        said = _failing_helm_release(local_stack, "v3")
        drift = local_stack.cli("drift", "local", "--layers", "gitops", "--json")

    assert drift.exit_code == 2, drift.output
    assert _gitops(drift)["problems"] == [said], drift.output
    no_credentials(drift.output)
