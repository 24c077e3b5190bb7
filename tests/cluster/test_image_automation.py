"""Image automation for real: Flux's image-reflector- and image-automation-controller (v1.2.4) on the local
cluster, distribution's registry (v3.1.2) on loopback as the image source, and the fleet server's SSH as
the only way to push to the fleet repository.

The local stack holds its deploy key (``git.deployKey.existing``), so the harness registers it on the fleet
server as the platform registers a key it makes on GitHub (``components/deploy_key.py``): read-write only
when the stack's ``flux.componentsExtra`` turns image automation on, read-only otherwise. The key Flux
pushes with is the one ``up`` put in Flux's Secret.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from gitops_infra.automation import up
from gitops_infra.components.flux import FLUX_SYNC_NAME, RECONCILE_REQUEST_ANNOTATION
from gitops_infra.config import FluxSpec
from gitops_infra.local import DeployKeyPair, FleetServer, ImageRegistry
from gitops_infra.local._fleet_server import READ_ONLY_REFUSAL
from gitops_infra.local._project import git
from gitops_infra.policy.rules import DeployKeySettings, deploy_key_violations

from ..support import TOOLCHAIN, unavailable, workspace
from .conftest import STACK, LocalStack, wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.extra]

IMAGE_COMPONENTS = ["image-reflector-controller", "image-automation-controller"]
IMAGE = ("image.toolkit.fluxcd.io", "v1")
SOURCE = ("source.toolkit.fluxcd.io", "v1", "gitrepositories")
KUSTOMIZE = ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations")
AUTHOR = "flux-image-automation"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ImageRegistry]:
    if not (TOOLCHAIN.bin_dir / "registry").is_file():
        unavailable("the local registry is not built: run `make setup`")
    started = ImageRegistry(tmp_path_factory.mktemp("registry"), toolchain=TOOLCHAIN).start()
    try:
        yield started
    finally:
        started.stop()


def _register(fleet: FleetServer, key: DeployKeyPair, components_extra: list[str]) -> FluxSpec:
    """Register ``key`` on the fleet server as the platform registers its own key on GitHub for a stack
    with these ``flux.componentsExtra``: ``read_only=not flux.image_automation``."""
    flux = FluxSpec.model_validate({"install": "external", "componentsExtra": components_extra})
    fleet.authorize(key, read_only=not flux.image_automation)
    return flux


def _manifests(stack: LocalStack, registry: ImageRegistry) -> dict[str, str]:
    namespace, path = stack.flux_namespace, stack.fleet_path
    image = f"{registry.host}/app"
    return {
        f"{path}/image-repository.yaml": f"""\
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata:
  name: app
  namespace: {namespace}
spec:
  image: {image}
  interval: 1m
  insecure: true  # the loopback registry speaks plain HTTP
""",
        f"{path}/image-policy.yaml": f"""\
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata:
  name: app
  namespace: {namespace}
spec:
  imageRepositoryRef:
    name: app
  policy:
    semver:
      range: ">=1.0.0"
""",
        f"{path}/image-update-automation.yaml": f"""\
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageUpdateAutomation
metadata:
  name: app
  namespace: {namespace}
spec:
  interval: 1m
  sourceRef:
    kind: GitRepository
    name: {FLUX_SYNC_NAME}
  git:
    checkout:
      ref:
        branch: main
    commit:
      author:
        name: {AUTHOR}
        email: {AUTHOR}@example.invalid
      messageTemplate: "images:{{{{ range .Changed.Changes }}}} {{{{ .NewValue }}}}{{{{ end }}}}"
    push:
      branch: main
  update:
    path: ./{path}
    strategy: Setters
""",
        f"{path}/app.yaml": f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: {stack.service_namespace}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: app
  template:
    metadata:
      labels:
        app: app
    spec:
      containers:
        - name: app
          image: {image}:1.0.0 # {{"$imagepolicy": "{namespace}:app"}}
""",
    }


def _object(stack: LocalStack, group: str, version: str, plural: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = client.CustomObjectsApi(stack.api).get_namespaced_custom_object(
        group, version, stack.flux_namespace, plural, name
    )
    return found


def _request_reconcile(stack: LocalStack, group: str, version: str, plural: str, name: str) -> None:
    """What ``flux reconcile`` does: a new ``requestedAt``, which the controller handles at once."""
    now = datetime.datetime.now(datetime.UTC).isoformat()
    body = {"metadata": {"annotations": {RECONCILE_REQUEST_ANNOTATION: now}}}
    client.CustomObjectsApi(stack.api).patch_namespaced_custom_object(
        group, version, stack.flux_namespace, plural, name, body
    )


def _synced(stack: LocalStack, sha: str) -> None:
    """Fetch and apply the fleet at ``sha`` now, rather than at the next interval."""
    _request_reconcile(stack, *SOURCE, FLUX_SYNC_NAME)
    _request_reconcile(stack, *KUSTOMIZE, FLUX_SYNC_NAME)

    def applied() -> str | None:
        status = _object(stack, *KUSTOMIZE, FLUX_SYNC_NAME).get("status", {})
        return (
            status.get("lastAppliedRevision")
            if status.get("lastAppliedRevision") == f"main@sha1:{sha}"
            else None
        )

    wait_until(applied, f"the Kustomization applied {sha}")


def _new_tag(stack: LocalStack, registry: ImageRegistry, tag: str) -> None:
    """Push ``tag``, and have the ImageRepository scan and the ImagePolicy pick it now."""
    registry.push("app", tag)
    _request_reconcile(stack, *IMAGE, "imagerepositories", "app")

    def picked() -> str | None:
        latest = _object(stack, *IMAGE, "imagepolicies", "app").get("status", {}).get("latestRef", {})
        return latest.get("tag") if latest.get("tag") == tag else None

    wait_until(picked, f"the ImagePolicy picked {tag}")
    _request_reconcile(stack, *IMAGE, "imageupdateautomations", "app")


def _head(fleet: FleetServer) -> str:
    return git(fleet.repository, "rev-parse", "main")


def _automation_commit(fleet: FleetServer, after: str) -> str | None:
    """The commit the automation pushed on top of ``after``, if it has."""
    head = _head(fleet)
    if head == after or git(fleet.repository, "log", "-1", "--format=%an", head) != AUTHOR:
        return None
    assert git(fleet.repository, "rev-parse", f"{head}^") == after  # one commit, on top of what was there
    return head


def _deployment_image(stack: LocalStack) -> str:
    deployment = client.AppsV1Api(stack.api).read_namespaced_deployment("app", stack.service_namespace)
    image: str = deployment.spec.template.spec.containers[0].image
    return image


def _automation_ready(stack: LocalStack) -> dict[str, Any] | None:
    conditions = (
        _object(stack, *IMAGE, "imageupdateautomations", "app").get("status", {}).get("conditions", [])
    )
    return next((c for c in conditions if c["type"] == "Ready"), None)


def test_image_automation_commits_over_ssh_with_the_read_write_key_and_a_read_only_key_cannot(
    local_stack: LocalStack, fleet: FleetServer, deploy_key: DeployKeyPair, registry: ImageRegistry
) -> None:
    # Item by item: a list given whole to a dotted path is stored as its JSON text.
    local_stack.set_all({f"flux.componentsExtra[{i}]": c for i, c in enumerate(IMAGE_COMPONENTS)})
    local_stack.commit("image automation")
    flux = _register(fleet, deploy_key, IMAGE_COMPONENTS)
    path = f"{local_stack.fleet_path}/app.yaml"
    pushed_before = len(fleet.pushes())  # the session's fleet server: other tests' pushes come first
    try:
        up("local", options=local_stack.options)
        registry.push("app", "1.0.0")
        committed = fleet.commit(_manifests(local_stack, registry), "an app, its image policy and automation")
        _synced(local_stack, committed)
        assert _deployment_image(local_stack) == f"{registry.host}/app:1.0.0"

        # 1.1.0: the automation commits the new tag to the fleet repository, over SSH with the stack's key.
        _new_tag(local_stack, registry, "1.1.0")
        first = wait_until(lambda: _automation_commit(fleet, committed), "image automation's commit")
        assert (
            git(fleet.repository, "log", "-1", "--format=%s", first) == f"images: {registry.host}/app:1.1.0"
        )
        assert f"image: {registry.host}/app:1.1.0 # " in git(fleet.repository, "show", f"{first}:{path}")
        assert fleet.pushes()[pushed_before:] == [(deploy_key.fingerprint, True)]
        automation = _object(local_stack, *IMAGE, "imageupdateautomations", "app")
        assert automation["status"]["lastPushCommit"] == first
        # ...and Flux applies it.
        _synced(local_stack, first)
        assert _deployment_image(local_stack) == f"{registry.host}/app:1.1.0"

        # The second act: a newer tag, a second commit on top of the first.
        _new_tag(local_stack, registry, "1.2.0")
        second = wait_until(lambda: _automation_commit(fleet, first), "image automation's second commit")
        assert f"image: {registry.host}/app:1.2.0 # " in git(fleet.repository, "show", f"{second}:{path}")
        _synced(local_stack, second)
        assert _deployment_image(local_stack) == f"{registry.host}/app:1.2.0"
        assert fleet.pushes()[pushed_before:] == [(deploy_key.fingerprint, True)] * 2

        # Image components off: the key is read-only, as the platform registers it then, and the policy
        # holds a writable key to that. The controller still runs (it is the harness's), and its push is
        # refused with GitHub's words, which its Ready condition carries.
        workspace(local_stack.root, local_stack.env).remove_config(
            STACK, "gitops-infra:flux.componentsExtra", path=True
        )
        local_stack.commit("no image automation")
        off = _register(fleet, deploy_key, [])
        assert (
            deploy_key_violations(
                {"readOnly": False}, DeployKeySettings(image_automation=off.image_automation)
            )
            != []
        )
        assert (
            deploy_key_violations(
                {"readOnly": False}, DeployKeySettings(image_automation=flux.image_automation)
            )
            == []
        )
        up("local", options=local_stack.options)
        _new_tag(local_stack, registry, "1.3.0")

        def refused() -> dict[str, Any] | None:
            ready = _automation_ready(local_stack)
            return (
                ready
                if ready and ready["status"] == "False" and READ_ONLY_REFUSAL in ready["message"]
                else None
            )

        condition = wait_until(refused, "the automation's push refused")
        assert condition["reason"] == "GitOperationFailed", condition
        assert fleet.pushes()[-1] == (deploy_key.fingerprint, False)
        assert _head(fleet) == second
        assert _deployment_image(local_stack) == f"{registry.host}/app:1.2.0"
    finally:
        fleet.authorize(deploy_key)  # the session's registration again: read-only
