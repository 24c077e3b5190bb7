"""Sealed Secrets through the stack: this repository's stack program with ``secrets.sealedSecrets`` on and its
keys in the config (``keySource: config``, made by ``generate_sealing_key``), the controller run by the
harness (Flux is installed outside the local stack, so the platform makes only the keys).

A Secret sealed offline with the stack's output ``sealedSecretsCert`` (``kubeseal --cert``) and committed to
the fleet is applied by Flux and opened by the controller. The second act: ``destroy``, then ``up`` on a
fresh cluster (a new API server, Flux and controller; the fleet unchanged): the same SealedSecret opens
again. A rotation: a second key, and a Secret sealed with the new cert opens while one sealed with the old
cert still does. Neither the value nor a private key is in any output, log, the state or the fleet.
"""

from __future__ import annotations

import base64
import datetime
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gitops_infra.automation import destroy, generate_sealing_key, sealing_cert, up
from gitops_infra.components.flux import FLUX_SYNC_NAME
from gitops_infra.local import FleetServer, LocalCluster
from gitops_infra.local._kubeseal import seal
from gitops_infra.local._sealed_secrets import CONTROLLER, KEY_LABEL, SealedSecretsController

from ..support import TOOLCHAIN, unavailable
from .conftest import LocalStack, wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.extra]

SEALED = ("bitnami.com", "v1alpha1", "sealedsecrets")
FLUX_KINDS = (
    ("source.toolkit.fluxcd.io", "v1", "gitrepositories"),
    ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations"),
)


@pytest.fixture
def sealed_stack(local_stack: LocalStack) -> LocalStack:
    if not (TOOLCHAIN.bin_dir / CONTROLLER).is_file():
        unavailable("the Sealed Secrets controller is not built: run `make setup`")
    return local_stack


def _namespace(stack: LocalStack) -> str:
    return f"sealed-{stack.name}"[:63].rstrip("-")


def _configure(stack: LocalStack, rotations: list[str]) -> None:
    """Sealed Secrets on, its keys from the config, in a namespace of the test's own."""
    section = {"enabled": True, "keySource": "config", "namespace": _namespace(stack), "rotations": rotations}
    stack.set("secrets", {"sealedSecrets": section})
    stack.commit(f"sealed secrets, rotations {rotations}")


def _keygen(stack: LocalStack, rotation: str = "") -> str:
    """A key for ``rotation`` in the stack's config, as `gitops-infra sealed-secrets keygen` makes it; the
    private key, read back from the config the way only this test may."""
    made = generate_sealing_key("local", rotation=rotation, options=stack.options)
    assert made.rotation == rotation and "PRIVATE KEY" not in repr(made)
    stack.commit(f"a sealing key for {rotation!r}")
    held = stack.raw_stack().get_config("gitops-infra:sealedSecretsKeys")
    assert held.secret
    pairs = json.loads(held.value)
    assert pairs[rotation]["cert"] == made.cert
    return str(pairs[rotation]["privateKey"])


def _key_lines(private_key: str) -> list[str]:
    """The private key whole, and a few lines of its body: a leak of part of it is a leak."""
    body = private_key.strip().splitlines()[1:-1]
    return [private_key.strip(), *body[1:4]]


def _create_namespace(api: Any, name: str) -> None:
    try:
        client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    except ApiException as exc:
        if exc.status != 409:
            raise


def _secret_value(api: Any, namespace: str, name: str, key: str) -> str | None:
    try:
        secret = client.CoreV1Api(api).read_namespaced_secret(name, namespace)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return base64.b64decode(secret.data[key]).decode() if secret.data and key in secret.data else None


def _reconcile_now(stack: LocalStack, api: Any) -> None:
    """Ask Flux to fetch and apply the fleet now, not at its next interval."""
    stamp = datetime.datetime.now(datetime.UTC).isoformat()
    body = {"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": stamp}}}
    for group, version, plural in FLUX_KINDS:
        client.CustomObjectsApi(api).patch_namespaced_custom_object(
            group, version, stack.flux_namespace, plural, FLUX_SYNC_NAME, body
        )


def _controller(cluster: LocalCluster, workdir: Path, namespace: str) -> SealedSecretsController:
    return SealedSecretsController(cluster, workdir, namespace=namespace)


@pytest.fixture
def fresh_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """A second cluster of this test's own: its API server, Flux's controllers, nothing of the first."""
    second = LocalCluster(tmp_path / "fresh-cluster", toolchain=TOOLCHAIN)
    try:
        yield second
    finally:
        second.stop()


def test_a_secret_sealed_with_the_stack_s_cert_opens_from_the_fleet_and_again_on_a_fresh_cluster(
    sealed_stack: LocalStack,
    cluster: LocalCluster,
    fresh_cluster: LocalCluster,
    fleet: FleetServer,
    tmp_path: Path,
) -> None:
    stack, namespace = sealed_stack, _namespace(sealed_stack)
    private_key = _keygen(stack)
    _configure(stack, [""])
    # Flux and the controller are installed outside the local stack: so is the controller's namespace.
    _create_namespace(stack.api, namespace)
    done = up("local", options=stack.options)
    cert = done.outputs["sealedSecretsCert"]
    assert cert.startswith("-----BEGIN CERTIFICATE-----"), cert
    keys = client.CoreV1Api(stack.api).list_namespaced_secret(namespace, label_selector=KEY_LABEL).items
    assert [s.type for s in keys] == ["kubernetes.io/tls"], [s.metadata.name for s in keys]

    controller = _controller(cluster, tmp_path / "controller", namespace).start()
    texts: dict[str, str] = {}
    try:
        # It took the stack's key, and made none of its own.
        assert controller.cert_pem() == cert
        printed = stack.cli("sealed-secrets", "cert", "local")
        as_json = stack.cli("sealed-secrets", "cert", "local", "--json")
        assert printed.exit_code == 0 and printed.stdout == cert.rstrip("\n") + "\n", printed.output
        assert json.loads(as_json.stdout)["cert"] == cert == sealing_cert("local", options=stack.options).cert
        texts |= {"cert": printed.output, "cert --json": as_json.output}

        value = secrets.token_hex(16)
        sealed = seal(TOOLCHAIN, cert, "db", stack.service_namespace, {"password": value})
        manifest = yaml.safe_dump(sealed)
        fleet.commit(
            {f"{stack.fleet_path}/sealed-db.yaml": manifest}, "a secret sealed with the stack's cert"
        )
        _reconcile_now(stack, stack.api)
        opened = wait_until(
            lambda: _secret_value(stack.api, stack.service_namespace, "db", "password"), "the Secret from git"
        )
        assert opened == value
    finally:
        controller.stop()
    texts["controller log"] = (tmp_path / "controller" / "logs" / f"{CONTROLLER}.log").read_text()

    # The second act: the stack destroyed, then up on a fresh cluster; the fleet as it was.
    assert destroy("local", options=stack.options).clean
    fresh_cluster.start()
    stack.set("localKubeconfig", fresh_cluster.kubeconfig, secret=True)
    stack.commit("the local stack, on a fresh cluster")
    api = fresh_cluster.api()
    _create_namespace(api, namespace)
    fresh = _controller(fresh_cluster, tmp_path / "fresh-controller", namespace)
    try:
        # The SealedSecret in git is applied by the first sync, before the controller starts: its CRD first.
        fresh._apply_crd()
        again = up("local", options=stack.options)
        assert again.outputs["sealedSecretsCert"] == cert
        fresh.start()
        assert fresh.cert_pem() == cert
        reopened = wait_until(
            lambda: _secret_value(api, stack.service_namespace, "db", "password"),
            "the Secret on the fresh cluster",
        )
        assert reopened == value
    finally:
        fresh.stop()
        destroy("local", options=stack.options)
    texts["fresh controller log"] = (tmp_path / "fresh-controller" / "logs" / f"{CONTROLLER}.log").read_text()

    # Neither the value nor the key: in the outputs, the logs, the state, the project or the fleet.
    texts["outputs"] = json.dumps({**done.outputs, **again.outputs})
    texts["fleet manifest"] = manifest
    tracked = [
        p
        for p in fleet.checkout.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(fleet.checkout).parts
    ]
    fleet_files = {str(p): p.read_text(errors="replace") for p in tracked}
    assert stack.secret_leaks([value, *_key_lines(private_key)], texts | fleet_files) == []


def test_a_rotation_seals_with_the_new_key_and_what_the_old_one_sealed_still_opens(
    sealed_stack: LocalStack, cluster: LocalCluster, tmp_path: Path
) -> None:
    stack, namespace, api = sealed_stack, _namespace(sealed_stack), sealed_stack.api
    apps = stack.service_namespace
    first_key = _keygen(stack)
    _configure(stack, [""])
    _create_namespace(api, namespace)
    first = up("local", options=stack.options).outputs["sealedSecretsCert"]
    controller = _controller(cluster, tmp_path / "controller", namespace).start()
    objects = client.CustomObjectsApi(api)
    try:
        old_value = secrets.token_hex(16)
        old = seal(TOOLCHAIN, first, "before", apps, {"token": old_value})
        objects.create_namespaced_custom_object(*SEALED[:2], apps, SEALED[2], old)
        assert wait_until(lambda: _secret_value(api, apps, "before", "token"), "before") == old_value

        # A rotation: a second key, last; the first stays for decryption.
        second_key = _keygen(stack, "2027-01")
        rotated = stack.cli("sealed-secrets", "keygen", "local", "--rotation", "2027-01")
        assert rotated.exit_code == 1 and "already holds a key pair for rotation '2027-01'" in rotated.output
        _configure(stack, ["", "2027-01"])
        second = up("local", options=stack.options).outputs["sealedSecretsCert"]
        assert second != first
        names = sorted(
            s.metadata.name
            for s in client.CoreV1Api(api).list_namespaced_secret(namespace, label_selector=KEY_LABEL).items
        )
        assert len(names) == 2, names
        # The controller watches the key Secrets (--watch-for-secrets): the new key is registered as the
        # `up` makes it, no restart (the chart's controller is also restarted by the keys' annotation).
        assert wait_until(lambda: controller.cert_pem() == second, "the new key registered", timeout=30)

        new_value = secrets.token_hex(16)
        new = seal(TOOLCHAIN, second, "after", apps, {"token": new_value})
        objects.create_namespaced_custom_object(*SEALED[:2], apps, SEALED[2], new)
        assert wait_until(lambda: _secret_value(api, apps, "after", "token"), "after") == new_value
        # What the first key sealed still opens: its Secret deleted, the controller makes it again.
        client.CoreV1Api(api).delete_namespaced_secret("before", apps)
        assert wait_until(lambda: _secret_value(api, apps, "before", "token"), "before, again") == old_value
    finally:
        controller.stop()
    log = (tmp_path / "controller" / "logs" / f"{CONTROLLER}.log").read_text()
    leaks = [old_value, new_value, *_key_lines(first_key), *_key_lines(second_key)]
    assert stack.secret_leaks(leaks, {"controller log": log, "keygen": rotated.output}) == []
