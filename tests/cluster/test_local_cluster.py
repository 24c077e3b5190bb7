"""The Kubernetes half on a real API server, the real Kubernetes provider and Flux's real controllers.

Each test runs this repository's stack program (the committed local stack: an existing cluster, Flux
installed outside the stack, a deploy key registered on the fleet server) through
``gitops_infra.automation``, and reads the result back through the Kubernetes API.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from pulumi import automation as auto

from gitops_infra import checks
from gitops_infra.automation import StackOptions, destroy, detect_drift, history, rollback_to_commit, up
from gitops_infra.cli import main
from gitops_infra.components.flux import FLUX_SECRET_NAME, FLUX_SYNC_NAME
from gitops_infra.contract import CONTRACT_VERSION
from gitops_infra.errors import OperationFailedError
from gitops_infra.local import DeployKeyPair, FleetServer, LocalCluster

from ..support import workspace, write_project
from .conftest import LocalStack, wait_until

pytestmark = pytest.mark.cluster

SOURCE = ("source.toolkit.fluxcd.io", "v1", "gitrepositories")
KUSTOMIZE = ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations")


def _object(stack: LocalStack, kind: tuple[str, str, str], name: str = FLUX_SYNC_NAME) -> dict[str, Any]:
    group, version, plural = kind
    found: dict[str, Any] = client.CustomObjectsApi(stack.api).get_namespaced_custom_object(
        group, version, stack.flux_namespace, plural, name
    )
    return found


def _ready(stack: LocalStack, kind: tuple[str, str, str]) -> dict[str, str] | None:
    """The object's Ready condition, once it has one."""
    try:
        conditions = _object(stack, kind).get("status", {}).get("conditions", [])
    except ApiException:
        return None
    return next((c for c in conditions if c["type"] == "Ready"), None)


def _configmap(stack: LocalStack, namespace: str, name: str) -> dict[str, str] | None:
    try:
        return client.CoreV1Api(stack.api).read_namespaced_config_map(name, namespace).data
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _workload(name: str) -> str:
    return (
        "apiVersion: v1\nkind: ConfigMap\n"
        f"metadata:\n  name: {name}\n  namespace: default\n"
        "data:\n  from: the fleet repository\n  host: shop.${baseDomain}\n"
    )


APPLIED = {"from": "the fleet repository", "host": "shop.local.example.com"}


# -- 1. what `up` creates ------------------------------------------------------------------------------------


def test_up_creates_flux_sync_objects_secret_and_contract(
    local_stack: LocalStack, cluster: LocalCluster
) -> None:
    up("local", options=local_stack.options)
    # The Kubernetes provider writes the kubeconfig it is given to a new file in $TMPDIR on every Configure
    # and never removes it: `up` leaves nothing in the engine's TMPDIR, while a raw preview leaves the
    # cluster's credentials there (which shows the first check can fail).
    engine_tmp = Path(local_stack.env["TMPDIR"])
    assert list(engine_tmp.iterdir()) == []
    local_stack.raw_stack().preview(on_output=None)
    left = [path for path in engine_tmp.iterdir() if path.name.startswith("kubeconfig")]
    assert left, "a raw preview left no kubeconfig in TMPDIR: has the Kubernetes provider stopped leaking it?"
    client_key = json.loads(cluster.kubeconfig)["users"][0]["user"]["client-key-data"]
    assert client_key in left[0].read_text()
    core = client.CoreV1Api(local_stack.api)

    secret = core.read_namespaced_secret(FLUX_SECRET_NAME, local_stack.flux_namespace)
    assert set(secret.data) == {
        "identity",
        "known_hosts",
    }  # no identity.pub: the key's public half is not set
    repository = _object(local_stack, SOURCE)
    assert repository["spec"]["url"].startswith("ssh://")
    assert repository["spec"]["secretRef"] == {"name": FLUX_SECRET_NAME}
    assert repository["spec"]["ref"] == {"branch": "main"}
    kustomization = _object(local_stack, KUSTOMIZE)
    assert kustomization["spec"]["path"] == f"./{local_stack.fleet_path}"
    assert kustomization["spec"]["prune"] is True
    assert kustomization["spec"]["deletionPolicy"] == "WaitForTermination"
    contract = {
        "contractVersion": CONTRACT_VERSION,
        "name": "local",
        "baseDomain": "local.example.com",
        "serviceNamespace": local_stack.service_namespace,
        "ingressEnabled": "false",
        "networkPoliciesEnforced": "false",
    }
    assert _configmap(local_stack, local_stack.service_namespace, "environment") == contract
    # The same contract, handed to Flux's post-build substitution.
    assert _configmap(local_stack, local_stack.flux_namespace, "environment") == contract
    assert kustomization["spec"]["postBuild"] == {
        "substituteFrom": [{"kind": "ConfigMap", "name": "environment", "optional": False}]
    }
    # `up` returned only once Flux reported both sync objects Ready.
    assert _ready(local_stack, SOURCE)["status"] == "True"  # type: ignore[index]
    assert _ready(local_stack, KUSTOMIZE)["status"] == "True"  # type: ignore[index]


# -- 2. Flux syncs -------------------------------------------------------------------------------------------


def test_flux_syncs_the_fleet_path_at_the_pushed_commit(local_stack: LocalStack, fleet: FleetServer) -> None:
    workload = f"hello-{local_stack.name}"
    sha = fleet.commit({f"{local_stack.fleet_path}/hello.yaml": _workload(workload)}, "a workload")

    up("local", options=local_stack.options)

    # No waiting here: `up` itself waited until Flux was Ready at the pushed revision.
    assert _ready(local_stack, SOURCE)["status"] == "True"  # type: ignore[index]
    assert _object(local_stack, SOURCE)["status"]["artifact"]["revision"] == f"main@sha1:{sha}"
    kustomization = _object(local_stack, KUSTOMIZE)
    assert kustomization["status"]["lastAppliedRevision"] == f"main@sha1:{sha}"
    # ${baseDomain} came from the environment contract.
    assert _configmap(local_stack, "default", workload) == APPLIED


# -- 3. a key the fleet server does not trust ----------------------------------------------------------------


# A key the server refuses on a rotation: test_credentials.py.


# -- 3b. a bootstrap that proves itself: `up` fails with Flux's own words ----------------------------------


def test_a_kustomization_that_is_not_ready_fails_up_with_flux_condition_message(
    local_stack: LocalStack,
) -> None:
    # `up`'s wait (readyTimeout) must outlast Flux's own (timeout)
    local_stack.set_all(
        {"git.path": f"{local_stack.fleet_path}-missing", "flux.timeout": "10s", "flux.readyTimeout": "15s"}
    )

    with pytest.raises(OperationFailedError) as info:
        up("local", options=local_stack.options)

    error = info.value
    (reason,) = error.not_ready
    where = f"Kustomization {local_stack.flux_namespace}/{FLUX_SYNC_NAME}"
    assert reason.startswith(f"{where} is not Ready (ArtifactFailed): kustomization path not found"), reason
    assert str(error).startswith(f"up on stack 'local' failed: {reason}; ")
    assert "timed out waiting for the condition" in error.engine_message  # what the provider alone says


def test_a_key_the_git_server_refuses_fails_up_with_the_auth_message(local_stack: LocalStack) -> None:
    local_stack.set("localDeployKey", DeployKeyPair.generate().private_key, secret=True)
    local_stack.set_all({"flux.timeout": "10s", "flux.readyTimeout": "15s"})

    with pytest.raises(OperationFailedError) as info:
        up("local", options=local_stack.options)

    (reason,) = info.value.not_ready
    assert reason.startswith(f"GitRepository {local_stack.flux_namespace}/{FLUX_SYNC_NAME} is not Ready"), (
        reason
    )
    assert "unable to authenticate" in reason or "handshake failed" in reason, reason
    assert "PRIVATE KEY" not in str(info.value)


def test_ready_timeout_zero_does_notwait_until(local_stack: LocalStack) -> None:
    local_stack.set_all({"git.path": f"{local_stack.fleet_path}-missing", "flux.readyTimeout": "0s"})

    up("local", options=local_stack.options)  # for a cluster Flux cannot reach yet: no wait, no failure

    assert "pulumi.com/waitFor" not in _object(local_stack, KUSTOMIZE)["metadata"].get("annotations", {})


# -- 3c. an app team's program reads the contract, typed ----------------------------------------------------

APP_PROGRAM = """\
import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import Environment, read_environment

provider = k8s.Provider("cluster", kubeconfig=pulumi.Config().require_secret("kubeconfig"))
env = read_environment(pulumi.Config().require("namespace"), provider=provider)
pulumi.export("type", env.apply(lambda e: type(e).__name__ if isinstance(e, Environment) else "?"))
pulumi.export("baseDomain", env.base_domain)
pulumi.export("ingressEnabled", env.ingress_enabled)
pulumi.export("host", env.apply(lambda e: f"shop.{e.base_domain}" if e.ingress_enabled else "no ingress"))
"""


def _app(local_stack: LocalStack, cluster: LocalCluster, tmp_path: Path) -> StackOptions:
    root = write_project(tmp_path / "app", "shop", virtualenv=sys.prefix)
    (root / "__main__.py").write_text(APP_PROGRAM)
    stack = auto.Stack.create("app", workspace(root, local_stack.env))
    stack.set_all_config(
        {
            "kubeconfig": auto.ConfigValue(cluster.kubeconfig, secret=True),
            "namespace": auto.ConfigValue(local_stack.service_namespace),
        }
    )
    return StackOptions(work_dir=root, env=local_stack.env)


def test_read_environment_gives_an_app_program_the_typed_contract(
    local_stack: LocalStack, cluster: LocalCluster, tmp_path: Path
) -> None:
    up("local", options=local_stack.options)
    app = _app(local_stack, cluster, tmp_path)

    result = up("app", options=app)

    assert result.outputs == {
        "type": "Environment",
        "baseDomain": "local.example.com",
        "ingressEnabled": False,  # a bool, not the ConfigMap's "false"
        "host": "no ingress",  # ingressEnabled is false on the local stack
    }
    core = client.CoreV1Api(local_stack.api)
    core.patch_namespaced_config_map(
        "environment", local_stack.service_namespace, {"data": {"baseDomain": "Not A Domain"}}
    )
    with pytest.raises(OperationFailedError) as info:
        up("app", options=app)
    assert f"{local_stack.service_namespace}/environment: invalid environment ConfigMap: baseDomain" in str(
        info.value
    )
    assert "Traceback" not in str(info.value)


# -- 4. drift on the contract --------------------------------------------------------------------------------


def test_an_out_of_band_edit_is_drift_that_writes_nothing_and_up_refresh_restores(
    local_stack: LocalStack,
) -> None:
    up("local", options=local_stack.options)
    core = client.CoreV1Api(local_stack.api)
    core.patch_namespaced_config_map(
        "environment", local_stack.service_namespace, {"data": {"baseDomain": "edited.example.com"}}
    )
    before = local_stack.raw_stack().export_stack().deployment

    report = detect_drift("local", options=local_stack.options)

    assert report.has_drift
    (drifted,) = [r for r in report.resources if r.type == "kubernetes:core/v1:ConfigMapPatch"]
    diffs = {d.path: (d.recorded, d.actual) for d in drifted.diffs}
    # Only what was declared: not the managedFields and resourceVersion the API server moved with it.
    assert diffs == {"data.baseDomain": ("local.example.com", "edited.example.com")}
    assert local_stack.raw_stack().export_stack().deployment == before, "drift detection wrote state"

    up("local", options=local_stack.options, refresh=True)
    assert (
        _configmap(local_stack, local_stack.service_namespace, "environment")["baseDomain"]
        == "local.example.com"
    )  # type: ignore[index]
    assert not detect_drift("local", options=local_stack.options).has_drift


# -- 5. a contract change on a ConfigMap with a fixed name ---------------------------------------------------


def test_a_contract_change_updates_the_fixed_name_configmap_in_place(local_stack: LocalStack) -> None:
    up("local", options=local_stack.options)
    core = client.CoreV1Api(local_stack.api)
    before = core.read_namespaced_config_map("environment", local_stack.service_namespace).metadata.uid
    local_stack.set("environment.ingressEnabled", "true")

    result = up("local", options=local_stack.options)

    # By default the provider replaces a ConfigMap whose data changed, deleting this fixed-name one
    # first: app teams would find no contract for that moment. The platform's provider updates both.
    assert result.changes == {"update": 2, "same": 9}, result.changes
    after = core.read_namespaced_config_map("environment", local_stack.service_namespace)
    assert after.metadata.uid == before
    assert after.data["ingressEnabled"] == "true"


# -- 5b. substitution: strict from kustomize-controller 1.9, lenient in the chart's 1.8 ------------------


def _script(name: str) -> str:
    # A shell variable the contract does not hold, the same one escaped, and a contract variable.
    return (
        "apiVersion: v1\nkind: ConfigMap\n"
        f"metadata:\n  name: {name}\n  namespace: default\n"
        "data:\n  script: echo ${HOME}\n  escaped: echo $${HOME}\n  host: shop.${baseDomain}\n"
    )


VERBATIM = {"script": "echo ${HOME}", "escaped": "echo $${HOME}", "host": "shop.${baseDomain}"}


def _substitution_off_applies_verbatim(local_stack: LocalStack, name: str) -> None:
    """The docs' way out: ``flux.substitute: false`` leaves the root Kustomization unsubstituted."""
    local_stack.set("flux.substitute", "false")
    up("local", options=local_stack.options)
    applied = wait_until(
        lambda: (
            (data := _configmap(local_stack, "default", name))
            and data.get("host") == VERBATIM["host"]
            and data
        ),
        "the manifest applied verbatim",
    )
    assert applied == VERBATIM


def _with_script(local_stack: LocalStack, fleet: FleetServer) -> str:
    name = f"script-{local_stack.name}"
    fleet.commit({f"{local_stack.fleet_path}/script.yaml": _script(name)}, f"a shell variable for {name}")
    # the failing case waits no longer than it must; `up`'s wait outlasts Flux's own
    local_stack.set_all({"flux.timeout": "10s", "flux.readyTimeout": "15s"})
    return name


def test_strict_substitution_fails_up_on_a_variable_the_contract_lacks(
    local_stack: LocalStack, cluster: LocalCluster, fleet: FleetServer
) -> None:
    name = _with_script(local_stack, fleet)
    # v1.9's default, stated rather than assumed: the local binary's default is what users' v1.8 lacks.
    with cluster.feature_gates("kustomize-controller", {"StrictPostBuildSubstitutions": True}):
        with pytest.raises(OperationFailedError) as info:
            up("local", options=local_stack.options)
        (reason,) = info.value.not_ready
        assert reason.startswith(f"Kustomization {local_stack.flux_namespace}/{FLUX_SYNC_NAME} is not Ready")
        assert "variable not set (strict mode)" in reason and "HOME" in reason, reason

        _substitution_off_applies_verbatim(local_stack, name)


def test_lenient_substitution_blanks_a_variable_the_contract_lacks(
    local_stack: LocalStack, cluster: LocalCluster, fleet: FleetServer
) -> None:
    name = _with_script(local_stack, fleet)
    # kustomize-controller v1.8.3 (the pinned flux2 chart's) substitutes leniently: the gate shows it here.
    with cluster.feature_gates("kustomize-controller", {"StrictPostBuildSubstitutions": False}):
        up("local", options=local_stack.options)
        applied = wait_until(lambda: _configmap(local_stack, "default", name), "the manifest from git")
        # ${HOME} is blanked without a word (the YAML scalar then loses its trailing space); $${HOME} is the
        # escape the docs give.
        assert applied == {"script": "echo", "escaped": "echo ${HOME}", "host": "shop.local.example.com"}

        _substitution_off_applies_verbatim(local_stack, name)


# -- 5c. the components in a program of one's own, with a plain provider ---------------------------------

PLAIN_PROGRAM = """\
import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import Environment, EnvironmentConfig, EnvironmentConfigArgs
from gitops_infra import FluxBootstrap, FluxBootstrapArgs, SourceSecretOptions, SyncOptions

config = pulumi.Config()
# As the docs' example makes it: no enableConfigMapMutable, no enableSecretMutable, no upsert.
provider = k8s.Provider("plain", kubeconfig=config.require_secret("kubeconfig"))
opts = pulumi.ResourceOptions(providers=[provider])
environment = Environment(
    name="plain", base_domain=config.require("baseDomain"), service_namespace=config.require("apps")
)
EnvironmentConfig("env", EnvironmentConfigArgs(environment=environment), opts=opts)
FluxBootstrap(
    "flux",
    FluxBootstrapArgs(
        source=SourceSecretOptions(
            private_key=config.require_secret("privateKey"), known_hosts=config.require("knownHosts")
        ),
        sync=SyncOptions(
            url=config.require("url"),
            path="clusters/plain",
            namespace=config.require("flux"),
            ready_timeout="0s",
        ),
        install=None,  # Flux runs already (the local cluster's controllers)
    ),
    opts=opts,
)
"""


def test_a_plain_provider_updates_the_fixed_name_objects_in_place(
    local_stack: LocalStack,
    cluster: LocalCluster,
    fleet: FleetServer,
    deploy_key: DeployKeyPair,
    tmp_path: Path,
) -> None:
    root = write_project(tmp_path / "plain", "plain", virtualenv=sys.prefix)
    (root / "__main__.py").write_text(PLAIN_PROGRAM)
    stack = auto.Stack.create("plain", workspace(root, local_stack.env))
    options = StackOptions(work_dir=root, env=local_stack.env)
    apps, flux = f"plain-{local_stack.name}"[:63], f"plain-flux-{local_stack.name}"[:63]
    stack.set_all_config(
        {
            "kubeconfig": auto.ConfigValue(cluster.kubeconfig, secret=True),
            "privateKey": auto.ConfigValue(deploy_key.private_key, secret=True),
            "knownHosts": auto.ConfigValue(fleet.known_hosts),
            "url": auto.ConfigValue(fleet.url),
            "baseDomain": auto.ConfigValue("plain.example.com"),
            "apps": auto.ConfigValue(apps),
            "flux": auto.ConfigValue(flux),
        }
    )
    core = client.CoreV1Api(local_stack.api)
    try:
        up("plain", options=options)
        contract = core.read_namespaced_config_map("environment", apps)
        secret = core.read_namespaced_secret(FLUX_SECRET_NAME, flux)

        # A contract change and a key rotation: with a ConfigMap and a Secret, the plain provider replaced
        # both, each deleted before it was made again (a new UID).
        stack.set_all_config(
            {
                "baseDomain": auto.ConfigValue("next.example.com"),
                "privateKey": auto.ConfigValue(DeployKeyPair.generate().private_key, secret=True),
            }
        )
        up("plain", options=options)

        after = core.read_namespaced_config_map("environment", apps)
        assert after.metadata.uid == contract.metadata.uid
        assert after.data["baseDomain"] == "next.example.com"
        rotated = core.read_namespaced_secret(FLUX_SECRET_NAME, flux)
        assert rotated.metadata.uid == secret.metadata.uid
        assert rotated.data["identity"] != secret.data["identity"]
    finally:
        stack.destroy(on_output=None)


EARLIER_RELEASE = """\
import pulumi
import pulumi_kubernetes as k8s

config = pulumi.Config()
provider = k8s.Provider("plain", kubeconfig=config.require_secret("kubeconfig"))


class EnvironmentConfig(pulumi.ComponentResource):
    # What EnvironmentConfig("env") registered up to this release: a plain ConfigMap, by the same name.
    def __init__(self) -> None:
        super().__init__("gitops-infra:index:EnvironmentConfig", "env", None)
        namespace = k8s.core.v1.Namespace(
            "env-namespace",
            metadata={"name": config.require("apps"), "labels": {"gitops-infra/environment": "plain"}},
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        k8s.core.v1.ConfigMap(
            "env-configmap",
            metadata={"name": "environment", "namespace": config.require("apps")},
            data={"contractVersion": "1", "name": "plain", "baseDomain": "plain.example.com",
                  "serviceNamespace": config.require("apps"), "ingressEnabled": "true",
                  "networkPoliciesEnforced": "false"},
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace]),
        )


EnvironmentConfig()
"""

THIS_RELEASE = """\
import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import Environment, EnvironmentConfig, EnvironmentConfigArgs

config = pulumi.Config()
provider = k8s.Provider("plain", kubeconfig=config.require_secret("kubeconfig"))
environment = Environment(
    name="plain", base_domain=config.require("baseDomain"), service_namespace=config.require("apps")
)
opts = pulumi.ResourceOptions(provider=provider)
EnvironmentConfig("env", EnvironmentConfigArgs(environment=environment), opts=opts)
"""


def test_a_stack_from_the_earlier_release_is_carried_over_in_place(
    local_stack: LocalStack, cluster: LocalCluster, tmp_path: Path
) -> None:
    # The second act of the change above: a dependency one version newer, on a stack made before it.
    root = write_project(tmp_path / "upgrade", "upgrade", virtualenv=sys.prefix)
    (root / "__main__.py").write_text(EARLIER_RELEASE)
    stack = auto.Stack.create("upgrade", workspace(root, local_stack.env))
    options = StackOptions(work_dir=root, env=local_stack.env)
    apps = f"upgrade-{local_stack.name}"[:63]
    stack.set_all_config(
        {
            "kubeconfig": auto.ConfigValue(cluster.kubeconfig, secret=True),
            "apps": auto.ConfigValue(apps),
            "baseDomain": auto.ConfigValue("plain.example.com"),
        }
    )
    core = client.CoreV1Api(local_stack.api)
    try:
        up("upgrade", options=options)
        uid = core.read_namespaced_config_map("environment", apps).metadata.uid

        (root / "__main__.py").write_text(THIS_RELEASE)
        upgraded = up("upgrade", options=options)
        assert set(upgraded.changes) <= {"same", "update"}, upgraded.changes  # nothing made or deleted

        stack.set_config("baseDomain", auto.ConfigValue("next.example.com"))
        up("upgrade", options=options)
        after = core.read_namespaced_config_map("environment", apps)
        assert after.metadata.uid == uid
        assert after.data["baseDomain"] == "next.example.com"
    finally:
        stack.destroy(on_output=None)


# -- 6. rollback ---------------------------------------------------------------------------------------------


def test_rollback_brings_the_previous_contract_back(local_stack: LocalStack) -> None:
    up("local", options=local_stack.options)
    local_stack.set("environment.baseDomain", "next.example.com")
    local_stack.commit("the next base domain")
    up("local", options=local_stack.options)
    assert (
        _configmap(local_stack, local_stack.service_namespace, "environment")["baseDomain"]
        == "next.example.com"
    )  # type: ignore[index]

    core = client.CoreV1Api(local_stack.api)
    uid = core.read_namespaced_config_map("environment", local_stack.service_namespace).metadata.uid

    result = rollback_to_commit("local", "previous", options=local_stack.options)

    assert result.rolled_back_to is not None
    assert (
        _configmap(local_stack, local_stack.service_namespace, "environment")["baseDomain"]
        == "local.example.com"
    )  # type: ignore[index]
    assert history("local", options=local_stack.options)[0].result == "succeeded"

    # The second act: the next `up` from the work tree brings the head's contract back, in place.
    again = up("local", options=local_stack.options)
    assert again.changes.get("update", 0) >= 1, again.changes
    config_map = core.read_namespaced_config_map("environment", local_stack.service_namespace)
    assert config_map.data["baseDomain"] == "next.example.com"
    assert config_map.metadata.uid == uid
    ready = _ready(local_stack, KUSTOMIZE)
    assert ready is not None and ready["status"] == "True", ready


# -- 6b. day 2: what already exists, and destroy then up --------------------------------------------------


def test_up_takes_what_exists_and_comes_back_after_a_destroy(local_stack: LocalStack) -> None:
    # Made out of band, as a Flux Operator or an earlier bootstrap would: Flux's namespace and its git-auth
    # Secret (with a stale key), and the service namespace with a workload of the app team's own.
    core = client.CoreV1Api(local_stack.api)
    for namespace in (local_stack.flux_namespace, local_stack.service_namespace):
        core.create_namespace({"metadata": {"name": namespace}})
    stale = {"identity": "c3RhbGU=", "known_hosts": "c3RhbGU="}
    core.create_namespaced_secret(
        local_stack.flux_namespace, {"metadata": {"name": FLUX_SECRET_NAME}, "data": stale}
    )
    core.create_namespaced_config_map(
        local_stack.service_namespace, {"metadata": {"name": "theirs"}, "data": {"owner": "app team"}}
    )

    up("local", options=local_stack.options)  # Ready: Flux cloned with the stack's key, not the stale one
    assert core.read_namespaced_secret(FLUX_SECRET_NAME, local_stack.flux_namespace).data != stale
    flux_labels = core.read_namespace(local_stack.flux_namespace).metadata.labels
    assert flux_labels["app.kubernetes.io/part-of"] == "flux"

    # The cluster is not the stack's (cluster.existing): nothing in it is drained, and nothing swept.
    destroyed = destroy("local", options=local_stack.options)
    assert destroyed.drain is not None and destroyed.drain.skipped is not None, destroyed.drain
    assert "not its own" in destroyed.drain.skipped and destroyed.drain.deleted == ()
    assert destroyed.sweeps == () and destroyed.clean
    # Neither namespace was the stack's to delete, nor the app team's ConfigMap.
    assert _configmap(local_stack, local_stack.service_namespace, "theirs") == {"owner": "app team"}
    assert core.read_namespace(local_stack.flux_namespace).status.phase == "Active"

    up("local", options=local_stack.options)  # the second act: everything retained is taken back
    ready = _ready(local_stack, KUSTOMIZE)
    assert ready is not None and ready["status"] == "True", ready


# -- 7. destroy ----------------------------------------------------------------------------------------------


def test_destroy_clears_everything_and_flux_prunes_what_it_applied(
    local_stack: LocalStack, fleet: FleetServer
) -> None:
    workload = f"pruned-{local_stack.name}"
    fleet.commit({f"{local_stack.fleet_path}/hello.yaml": _workload(workload)}, "a workload to prune")
    up("local", options=local_stack.options)
    wait_until(lambda: _configmap(local_stack, "default", workload), "the workload from git")

    local_stack.raw_stack().destroy()

    core = client.CoreV1Api(local_stack.api)
    names = {n.metadata.name: n.status.phase for n in core.list_namespace().items}
    assert "Terminating" not in names.values(), names
    # On a cluster the stack did not make, the service namespace may hold workloads of its own: it stays,
    # and only the contract the stack wrote into it goes.
    assert names[local_stack.service_namespace] == "Active"
    # The contract was a patch: destroy gave up every field it applied, so no app reads a stale contract.
    # The object itself would go with a namespace the stack made; this one is kept.
    contract = core.read_namespaced_config_map("environment", local_stack.service_namespace)
    assert not contract.data, contract.data
    assert "pulumi.com/patchForce" not in (contract.metadata.annotations or {})
    # Flux's namespace is kept (installed elsewhere), its sync objects gone, and what Flux applied pruned
    # while kustomize-controller still ran: the Kustomization waited for it (WaitForTermination).
    assert names[local_stack.flux_namespace] == "Active"
    for kind in (SOURCE, KUSTOMIZE):
        group, version, plural = kind
        listed = client.CustomObjectsApi(local_stack.api).list_namespaced_custom_object(
            group, version, local_stack.flux_namespace, plural
        )
        assert listed["items"] == []
    assert _configmap(local_stack, "default", workload) is None


# -- 8. the API server and the config validator agree --------------------------------------------------------


@pytest.mark.parametrize(
    "interval", ["1m30s", "0s", "1.5h", "300ms", "0", ".5m", "1.m", "5µs", "10ns", "5 m"]
)
def test_the_crd_schema_and_the_config_agree_on_a_duration(cluster: LocalCluster, interval: str) -> None:
    api = client.CustomObjectsApi(cluster.api())
    namespace = "duration-checks"
    core = client.CoreV1Api(cluster.api())
    if namespace not in {n.metadata.name for n in core.list_namespace().items}:
        core.create_namespace({"metadata": {"name": namespace}})
    body = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"generateName": "interval-"},
        "spec": {"url": "ssh://git@example.invalid/fleet", "interval": interval},
    }
    try:
        api.create_namespaced_custom_object(
            "source.toolkit.fluxcd.io", "v1", namespace, "gitrepositories", body
        )
        server_accepts = True
    except ApiException as exc:
        assert exc.status == 422, exc
        server_accepts = False
    assert server_accepts is (checks.go_duration_problem(interval) is None)


# -- 9. the fleet's Indexed Job is one the API server takes --------------------------------------------------


def test_the_fleet_job_is_accepted_and_stored_as_emitted(cluster: LocalCluster) -> None:
    # Its pods would only be simulated here (kwok runs no container): a server-side dry run validates and
    # defaults the Job as a real create would, and returns the object the API server would store.
    result = CliRunner().invoke(
        main,
        [
            "fleet",
            "job",
            "--shards",
            "8",
            "--parallelism",
            "3",
            "--image",
            "registry.example.com/fleet:1",
            "--service-account",
            "fleet-drift",
            "--secret",
            "fleet-credentials",
            "--selector",
            "tier=prod",
        ],
    )
    assert result.exit_code == 0, result.output
    job = yaml.safe_load(result.stdout)
    core = client.CoreV1Api(cluster.api())
    namespace = job["metadata"]["namespace"]
    if namespace not in {n.metadata.name for n in core.list_namespace().items}:
        core.create_namespace({"metadata": {"name": namespace}})
    batch = client.BatchV1Api(cluster.api())
    stored = batch.create_namespaced_job(namespace, job, dry_run="All")
    spec = stored.spec
    assert (spec.completion_mode, spec.completions, spec.parallelism) == ("Indexed", 8, 3)
    assert spec.backoff_limit_per_index == 1
    (rule,) = spec.pod_failure_policy.rules
    assert (rule.action, rule.on_exit_codes.operator, rule.on_exit_codes.values) == ("FailIndex", "In", [2])
    (container,) = spec.template.spec.containers
    assert container.command == [
        "gitops-infra",
        "drift",
        "--all",
        "--shard",
        "auto/8",
        "--selector",
        "tier=prod",
        "--json",
    ]
    assert container.env_from[0].secret_ref.name == "fleet-credentials"
    assert spec.template.spec.service_account_name == "fleet-drift"
    assert spec.template.spec.restart_policy == "Never"
    assert batch.list_namespaced_job(namespace).items == []  # a dry run stores nothing

    # The server does judge it: the same Job with FailIndex but no per-index backoff is refused.
    broken = {
        **job,
        "spec": {key: value for key, value in job["spec"].items() if key != "backoffLimitPerIndex"},
    }
    with pytest.raises(ApiException) as refused:
        batch.create_namespaced_job(namespace, broken, dry_run="All")
    assert refused.value.status == 422 and "backoffLimitPerIndex" in refused.value.body
