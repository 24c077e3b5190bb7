"""``FleetRepository``: the GitHub repository Flux syncs, optionally created, and its path scaffolded.

With an empty fleet repository the root Kustomization fails until someone creates ``clusters/<env>``.
Scaffolding commits ``<path>/kustomization.yaml`` (an empty ``resources: []`` list) and a short
``<path>/README.md`` on the sync branch, so a first ``up`` goes green. The files are the fleet's once
written, and it never overwrites or deletes what a person wrote:

- each file is looked up on the branch first, and only a missing one is created. A file that exists is
  left as it is and not managed at all (``github.RepositoryFile`` would fail on it: with
  ``overwrite_on_create=False`` it refuses to overwrite an existing file);
- a file whose last commit is still the scaffold's own stays managed, so a second ``up`` changes nothing;
  and if the stack was destroyed and is brought back, it is written again in place of itself
  (``overwrite_on_create``) rather than refused;
- later edits are the fleet's (``ignore_changes``): after one, the file is left alone;
- ``destroy`` keeps the files (``retain_on_delete``): deleting them would commit deletions to the fleet,
  and fail with a conflict on a file edited since.

With ``tenants`` (the tenants that sync from this repository, each by its path), the scaffold adds the
``tenants/`` layout: ``tenants/README.md`` (what an app team may write, where, and how it is onboarded)
and a starter ``kustomization.yaml`` in each tenant's path, under the same rules. A tenant removed from
the config leaves its directory as it is, as a destroy does (its files were retained): what a team wrote
is theirs, Flux has already pruned what it applied, and a tenant added back syncs it again.

Creating the repository is opt-in too (``create``). A created repository is kept on ``destroy``
(``retain_on_delete``): tearing down a cluster never deletes a fleet's history. So it is looked up
first: a missing one is created; one this stack made (its description says so) is taken back into the
stack (``import_``, a no-op while it is in the state), so the ``up`` after a ``destroy`` does not fail on
a name GitHub already holds; any other of that name is used as it is, never managed.

The GitHub provider comes through ``opts``, as for ``DeployKey``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pulumi

from gitops_infra import checks
from gitops_infra._lazy import sdk
from gitops_infra.components._argocd_scaffold import (
    APPLICATION_SET_FILE,
    APPS_DIR,
    ArgoCdScaffold,
    argocd_files,
)
from gitops_infra.components._args import Problems
from gitops_infra.components._tenant_scaffold import TENANTS_README, tenant_files
from gitops_infra.contract import CLUSTER_SECRET_STORE_KEY, CONTRACT_KEYS
from gitops_infra.defaults import FLUX_NAMESPACE, RepositoryVisibility

if TYPE_CHECKING:
    import pulumi_github as github
else:
    github = sdk("pulumi_github")

__all__ = [
    "DESCRIPTION",
    "SCAFFOLD_KUSTOMIZATION",
    "SCAFFOLD_README",
    "FleetRepository",
    "FleetRepositoryArgs",
    "RepositoryVisibility",
    "scaffold_files",
]

TYPE_TOKEN = "gitops-infra:index:FleetRepository"
SCAFFOLD_KUSTOMIZATION = "kustomization.yaml"
SCAFFOLD_README = "README.md"
DESCRIPTION = "Fleet repository synced by Flux (gitops-infra)"
"""A created repository's description: what tells a repository this stack made from any other."""
COMMIT_MESSAGE = "Scaffold {path} for Flux (gitops-infra)"
"""The scaffold's commit message: a file whose last commit says this is still the scaffold's own."""
ARGO_CD_COMMIT_MESSAGE = "Scaffold {path} for Argo CD (gitops-infra)"
"""The same, for a path scaffolded for Argo CD."""
# Fields the provider fills from GitHub or the user edits: none of them is this stack's to change.
_FLEET_OWNED = ["content", "commitMessage", "overwriteOnCreate"]


@dataclass(frozen=True)
class FleetRepositoryArgs:
    """Inputs of ``FleetRepository``.

    ``repository`` is the repository's name (the provider's owner applies). ``scaffold`` commits the
    starter files under ``path`` on ``branch``; ``create`` makes the repository, with that visibility.
    """

    repository: pulumi.Input[str]
    path: str
    branch: str = checks.DEFAULT_BRANCH
    environment: str | None = None
    """The environment the path is for, named in the scaffolded README."""
    scaffold: bool = True
    create: RepositoryVisibility | None = None
    tenants: Mapping[str, str] = field(default_factory=dict)
    """The tenants that sync from this repository, by name: the path of each (``tenants/<name>`` by
    default). With ``scaffold``, each path gets a starter file, and ``tenants/`` its README."""
    secret_store: str | None = None
    """The ClusterSecretStore the platform makes (the contract's ``clusterSecretStore``), when External
    Secrets is on: the README then says how an app team reads a secret through it."""
    secret_prefix: str | None = None
    """The prefix of the secret names that store may read, for the README's example."""
    sealed_secrets: bool = False
    """Whether the platform runs Sealed Secrets: the README then says how to seal a Secret for git."""
    receiver_url: str | None = None
    """The public URL of Flux's webhook Receiver, when the platform makes one: the README then says how
    to expose it."""
    flux_namespace: str = FLUX_NAMESPACE
    """Flux's namespace, where the Receiver's Service is, for the README's example."""
    argocd: ArgoCdScaffold | None = None
    """With Argo CD as the engine: the path is scaffolded for it (an ApplicationSet of the contract)."""

    def __post_init__(self) -> None:
        problems = Problems("FleetRepositoryArgs")
        problems.gate("repository", checks.repository_name_problem, self.repository)
        problems.gate("path", checks.relative_path_problem, self.path)
        problems.gate("branch", checks.branch_problem, self.branch)
        if self.secret_store is not None:
            problems.gate("secret_store", checks.dns_label_problem, self.secret_store)
        for tenant, path in self.tenants.items():
            problems.gate(f"tenants[{tenant!r}]", checks.dns_label_problem, tenant)
            problems.gate(f"tenants[{tenant!r}]", checks.relative_path_problem, path)
            if checks.relative_path_problem(path) is None and checks.paths_overlap(path, self.path):
                problems.add(f"tenants[{tenant!r}]", "holds or lies inside path: Flux would apply it twice")
        if self.receiver_url is not None:
            problems.gate("receiver_url", checks.receiver_url_problem, self.receiver_url)
        problems.gate("flux_namespace", checks.dns_label_problem, self.flux_namespace)
        problems.check(
            self.create is None or isinstance(self.create, RepositoryVisibility),
            "create",
            "must be a RepositoryVisibility (private or internal), or None",
        )
        problems.raise_if_any()


_EXTERNAL_SECRETS = """
## Secrets from AWS Secrets Manager (External Secrets)

The platform runs External Secrets, with the ClusterSecretStore `{store}` (the contract's
`clusterSecretStore`: `${{clusterSecretStore}}` where Flux substitutes the contract, or the `environment`
ConfigMap's key). Keep the value in Secrets Manager, named under `{prefix}`, and commit only the
reference. The store reads only under `{prefix}`: `remoteRef.key` is the name after it (`shop/db` reads
`{prefix}shop/db`), and a name outside it cannot be reached:

```yaml
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {{name: db, namespace: "${{serviceNamespace}}"}}
spec:
  refreshInterval: 1h
  secretStoreRef: {{kind: ClusterSecretStore, name: "${{clusterSecretStore}}"}}
  target: {{name: db}}
  data:
    - secretKey: password
      remoteRef: {{key: shop/db, property: password}}
```

The controller makes the Secret `db` and updates it within `refreshInterval` of a new value. Name each
secret with `remoteRef.key`: `dataFrom.find` needs a listing the store is not allowed.
"""


_SEALED_SECRETS = """
## Secrets sealed for git (Sealed Secrets)

The platform runs the Sealed Secrets controller and owns its keys. Seal a Secret offline with the cluster's
cert (public), and commit only the SealedSecret:

```sh
gitops-infra sealed-secrets cert STACK > cert.pem   # or: pulumi stack output sealedSecretsCert
kubectl create secret generic db --namespace shop --from-literal=password=... --dry-run=client -o yaml \\
  | kubeseal --cert cert.pem --format yaml > db.sealed.yaml
```

It opens only as that name in that namespace (kubeseal's strict scope). The keys outlive the cluster: what
is sealed here opens again on a rebuilt one, and after a key rotation (re-seal with the new cert when
convenient; the old keys still decrypt).
"""


_RECEIVER = """
## Instant sync: exposing Flux's webhook Receiver

GitHub posts each push to `{url}` plus the path of the Receiver `flux-system` in `{namespace}`
(`kubectl -n {namespace} get receiver flux-system -o jsonpath='{{.status.webhookPath}}'`), and Flux
fetches the commit at once. Route `{host}` to notification-controller's `webhook-receiver` Service
(port 80, in `{namespace}`), with an Ingress:

```yaml
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: flux-webhook, namespace: {namespace}}}
spec:
  ingressClassName: nginx
  tls: [{{hosts: [{host}], secretName: flux-webhook-tls}}]
  rules:
    - host: {host}
      http:
        paths:
          - path: /hook/
            pathType: Prefix
            backend: {{service: {{name: webhook-receiver, port: {{number: 80}}}}}}
```

or with a LoadBalancer Service of its own in front of the same pods (`app: notification-controller`,
port `http-webhook`), terminating TLS at the load balancer (on AWS, an ACM certificate in the annotation
`service.beta.kubernetes.io/aws-load-balancer-ssl-cert`). notification-controller matches the whole
request path, so a path in the URL must be stripped before the request reaches the Service. The token
the webhook is signed with is the Secret `receiver-token`; a request without its signature is refused.
"""


def scaffold_files(
    path: str,
    environment: str | None = None,
    tenants: Mapping[str, str] | None = None,
    secret_store: str | None = None,
    secret_prefix: str | None = None,
    sealed_secrets: bool = False,
    receiver_url: str | None = None,
    flux_namespace: str = FLUX_NAMESPACE,
    argocd: ArgoCdScaffold | None = None,
) -> dict[str, str]:
    """The starter files for ``path``, and the ``tenants/`` layout for ``tenants`` (a path by tenant name),
    by their path in the repository. With ``secret_store``, the README says how to read a secret
    through it (one named under ``secret_prefix``, by default ``<environment>/``); with ``sealed_secrets``,
    how to seal a Secret for git; with ``receiver_url``, how to expose Flux's webhook Receiver there.
    With ``argocd``, the path is Argo CD's instead (:mod:`._argocd_scaffold`)."""
    path = path.strip("/")
    if argocd is not None:
        return argocd_files(path, environment or "this", argocd, secret_store=secret_store is not None)
    # The store is in the contract only when External Secrets is on.
    keys = [key for key in CONTRACT_KEYS if key != CLUSTER_SECRET_STORE_KEY or secret_store is not None]
    variables = ", ".join(f"`${{{key}}}`" for key in keys)
    target = f"the {environment} cluster" if environment else "its cluster"
    readme = (
        f"# {path}\n\n"
        f"Flux syncs this directory to {target}. List your manifests, or the Kustomizations of your\n"
        f"apps, under `resources` in `{SCAFFOLD_KUSTOMIZATION}`.\n\n"
        f"Manifests here may use the environment contract's values: {variables}.\n"
        "Flux substitutes every `${VAR}` under this path, and a variable the contract does not define\n"
        "is an error on kustomize-controller 1.9 and later (it was replaced with nothing before). Write\n"
        "`$${VAR}` for a literal `${VAR}` (a script in a ConfigMap, a dashboard), give it a default\n"
        "(`${VAR:=value}`), or annotate an object `kustomize.toolkit.fluxcd.io/substitute: disabled` to\n"
        "leave it alone.\n\n"
        "gitops-infra created these two files once and never changes them again: they are yours.\n"
    )
    if secret_store is not None:
        prefix = secret_prefix if secret_prefix is not None else f"{environment or '<environment>'}/"
        readme += _EXTERNAL_SECRETS.format(store=secret_store, prefix=prefix)
    if sealed_secrets:
        readme += _SEALED_SECRETS
    if receiver_url is not None:
        host = receiver_url.removeprefix("https://").split("/")[0].split(":")[0]
        readme += _RECEIVER.format(url=receiver_url, host=host, namespace=flux_namespace)
    kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"
    files = {f"{path}/{SCAFFOLD_KUSTOMIZATION}": kustomization, f"{path}/{SCAFFOLD_README}": readme}
    for file, content in tenant_files(tenants or {}).items():
        files.setdefault(file, content)  # a sync path of `tenants` keeps its own README
    return files


def _role(file: str, path: str, tenants: Mapping[str, str]) -> str:
    """A scaffolded file's part of its resource name: the sync path's ``readme`` and ``kustomization`` (as
    they always were), ``tenants-readme``, and ``tenant-<name>``."""
    if posixpath.dirname(file) == path.strip("/"):
        if file.endswith(APPLICATION_SET_FILE):
            return "applicationset"
        return "readme" if file.endswith(SCAFFOLD_README) else "kustomization"
    if posixpath.dirname(file) == f"{path.strip('/')}/{APPS_DIR}":
        return "apps-readme"
    if file == TENANTS_README:
        return "tenants-readme"
    return next(
        f"tenant-{tenant}"
        for tenant, tenant_path in tenants.items()
        if file == f"{tenant_path.strip('/')}/{SCAFFOLD_KUSTOMIZATION}"
    )


class FleetRepository(pulumi.ComponentResource):
    """The fleet repository: created if asked for, and its sync path scaffolded if asked for."""

    repository_name: pulumi.Output[str]
    repository: github.Repository | None
    files: list[github.RepositoryFile]

    def __init__(
        self, name: str, args: FleetRepositoryArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.repository = None
        repository_name = pulumi.Output.from_input(args.repository)
        existing = self._existing_description(args) if args.create is not None else None
        if args.create is not None and (existing is None or existing == DESCRIPTION):
            self.repository = github.Repository(
                f"{name}-repository",
                name=args.repository,
                visibility=args.create.value,
                auto_init=True,  # the first commit makes the default branch the files go onto
                description=DESCRIPTION,
                opts=pulumi.ResourceOptions(
                    parent=self,
                    retain_on_delete=True,
                    # Ours from an earlier run: taken back as it is (GitHub reads no auto_init back).
                    import_=args.repository
                    if existing is not None and isinstance(args.repository, str)
                    else None,
                    ignore_changes=["autoInit"],
                ),
            )
            repository_name = self.repository.name
        self.repository_name = repository_name
        self.files = []
        if args.scaffold:
            files = scaffold_files(
                args.path,
                args.environment,
                args.tenants,
                args.secret_store,
                args.secret_prefix,
                args.sealed_secrets,
                args.receiver_url,
                args.flux_namespace,
                args.argocd,
            )
            for file, content in files.items():
                # Each directory's own: a tenant's file is told from the team's edits as the path's is.
                message = (ARGO_CD_COMMIT_MESSAGE if args.argocd else COMMIT_MESSAGE).format(
                    path=posixpath.dirname(file)
                )
                found = self._last_commit_message(args, file)
                if found is not None and found != message:
                    continue  # the fleet's file: left as it is
                self.files.append(
                    github.RepositoryFile(
                        f"{name}-scaffold-{_role(file, args.path, args.tenants)}",
                        repository=self.repository_name,
                        branch=args.branch,
                        file=file,
                        content=content,
                        commit_message=message,
                        # Only ever over our own unedited file (a stack brought back after a destroy).
                        overwrite_on_create=found is not None,
                        opts=pulumi.ResourceOptions(
                            parent=self, ignore_changes=_FLEET_OWNED, retain_on_delete=True
                        ),
                    )
                )
        self.register_outputs(
            {"repositoryName": self.repository_name, "files": [file.file for file in self.files]}
        )

    def _existing_description(self, args: FleetRepositoryArgs) -> str | None:
        """The description of the repository of that name, ``""`` for none; ``None`` when there is no such
        repository (or its name is not known yet)."""
        if not isinstance(args.repository, str):
            return None
        found = github.get_repository(name=args.repository, opts=pulumi.InvokeOptions(parent=self))
        # The provider answers a missing repository (404) with an empty result, not an error.
        return (found.description or "") if found.node_id else None

    def _last_commit_message(self, args: FleetRepositoryArgs, file: str) -> str | None:
        """The message of the last commit that changed ``file`` on the branch; ``None`` when it is missing
        (or the repository is: one this stack creates), or when the name is not known yet."""
        if not isinstance(args.repository, str):
            return None  # an Output: nothing to look up before the run; created as before
        found = github.get_repository_file(
            repository=args.repository,
            file=file,
            branch=args.branch,
            opts=pulumi.InvokeOptions(parent=self),
        )
        # The provider answers a missing file (404) with an empty result, not an error.
        return (found.commit_message or "") if found.sha else None
