"""The fleet's ``tenants/`` layout, as ``FleetRepository`` scaffolds it: a README that says what an app team
may write and where, and a starter ``kustomization.yaml`` in each tenant's path.

The starter lists no resources, which kustomize-controller builds into nothing and reports Ready: it
needs the path to exist (``kustomization path not found`` otherwise, and git keeps no empty directory),
and a directory without a ``kustomization.yaml`` would have one generated from every YAML file in it.
"""

from __future__ import annotations

from collections.abc import Mapping

from gitops_infra.contract import CLUSTER_SECRET_STORE_KEY, CONTRACT_KEYS
from gitops_infra.defaults import TENANT_PATH_TEMPLATE

TENANTS_README = TENANT_PATH_TEMPLATE.partition("{")[0] + "README.md"
"""The layout's README, at the root of the default tenant paths (``tenants/README.md``)."""

_README = """\
# tenants

Each app team the platform onboards (a *tenant*) writes its manifests to its own directory here,
`tenants/<name>/` (the platform may set another path for a tenant). Flux applies it with the tenant's own
Kustomization `<name>`, in the tenant's home namespace (its first), as the tenant's service account
`<name>-reconciler`: into the tenant's namespaces, and nowhere else.

## Getting a directory

A team is onboarded by the platform team: they add it to the stack config's `gitops-infra:tenants` and
run `up`. That makes its namespaces, its reconciler and its sync, and starts its directory here with an
empty `kustomization.yaml`. Ask them for your namespaces, your role (`admin` by default) and a quota.

## What you may write

List your manifests under `resources` in your `kustomization.yaml`. Flux applies them as
`<name>-reconciler`, which may do what your role allows in your namespaces:

- Deployments, Services, ConfigMaps, Secrets, Ingresses and the rest of what your role grants;
- Flux objects of your own (a HelmRelease, say), naming `serviceAccountName: <name>-reconciler`.

With one namespace, leave out `metadata.namespace`: Flux puts everything there. With several, each
manifest names its own. An object you take out of `resources` is deleted from the cluster (Flux prunes).

Manifests may use the environment contract's values,
{variables}:
Flux substitutes every `${{VAR}}` (unless the platform turned that off), and one the contract does not
define is an error. Write `$${{VAR}}` for a literal `${{VAR}}`. The contract is also the ConfigMap
`environment` in each of your namespaces, for your pipeline to read.

## What is refused

Flux refuses, as `<name>-reconciler`, and your Kustomization fails on:

- an object in another namespace (another team's, the platform's, `kube-system`): the message names
  `system:serviceaccount:<home namespace>:<name>-reconciler`;
- a cluster-scoped object: a ClusterRole, a ClusterRoleBinding, a CRD, a Namespace;
- a remote base in a `kustomization.yaml` (`resources: [https://...]`).

A Flux object of yours that names no service account (it applies as `default`, which can do nothing),
or that uses a source in another namespace (`sourceRef.namespace`), fails in its turn. A refusal shows
under your tenant's name in `gitops-infra status` and `drift`; every other tenant, and the platform, go
on as before.

## Leaving

When the platform team removes a tenant, Flux deletes what it applied, then its namespaces. Its directory
here is left as it is: your manifests stay in git, and come back if the tenant is added again.
"""


def tenant_readme() -> str:
    """The layout's README (``tenants/README.md``)."""
    # The store is there only when External Secrets is on: the fleet's README names it then.
    variables = ", ".join(f"`${{{key}}}`" for key in CONTRACT_KEYS if key != CLUSTER_SECRET_STORE_KEY)
    return _README.format(variables=variables)


def tenant_kustomization(name: str) -> str:
    """A tenant's starter ``kustomization.yaml``: no resources yet, and where to read what may go in it."""
    return (
        f"# Tenant {name}: Flux applies what this lists as {name}-reconciler, into the tenant's namespaces.\n"
        f"# What you may write here: {TENANTS_README} at the repository's root.\n"
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"
    )


def tenant_files(tenants: Mapping[str, str]) -> dict[str, str]:
    """The layout for ``tenants`` (a path by tenant name), by path in the repository: the README, and a
    starter kustomization in each tenant's path. Nothing without tenants."""
    if not tenants:
        return {}
    files = {TENANTS_README: tenant_readme()}
    for name, path in sorted(tenants.items()):
        files[f"{path.strip('/')}/kustomization.yaml"] = tenant_kustomization(name)
    return files
