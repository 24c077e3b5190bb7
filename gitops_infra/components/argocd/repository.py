"""Repository: the Secret Argo CD fetches the fleet repository with, and the host keys it trusts.

The second piece of :mod:`gitops_infra.components.argocd`, from the same ``GitAuth`` as Flux's source
Secret (:mod:`gitops_infra.components.flux.source_secret`): ``repository_secret_data`` turns a deploy key
(``SourceSecretOptions``: ``sshPrivateKey``) or a GitHub App (``GitHubAppSecretOptions``: ``githubAppID``,
``githubAppInstallationID``, ``githubAppPrivateKey``, and the Enterprise API's base URL) into the data of a
Secret labelled ``argocd.argoproj.io/secret-type: repository``, and ``build_repository`` registers it.

Argo CD trusts SSH host keys from ``argocd-ssh-known-hosts-cm`` only. The chart install writes them there
(:mod:`.install`); with Argo CD installed outside the stack, ``build_known_hosts`` takes that ConfigMap's
``ssh_known_hosts`` key over: GitHub's published keys, and the fleet's when it is not on github.com.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra.components._kubernetes import NamespaceResource, fixed_config_map, fixed_secret
from gitops_infra.components.argocd._names import SECRET_TYPE_LABEL
from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS
from gitops_infra.components.flux.source_secret import (
    GITHUB_APP_ID_KEY,
    GITHUB_APP_INSTALLATION_ID_KEY,
    GITHUB_APP_PRIVATE_KEY_KEY,
    GitAuth,
    GitHubAppSecretOptions,
)

__all__ = [
    "GITHUB_APP_ENTERPRISE_URL_KEY",
    "KNOWN_HOSTS_CONFIGMAP",
    "KNOWN_HOSTS_KEY",
    "SSH_PRIVATE_KEY_KEY",
    "build_known_hosts",
    "build_repository",
    "known_hosts_text",
    "repository_secret_data",
]

SSH_PRIVATE_KEY_KEY = "sshPrivateKey"
# The keys Argo CD 3.x reads from a repository Secret for a GitHub App (util/db/repository_secrets.go):
# the same names as source-controller's for the ID, installation and key; the base URL's differs.
GITHUB_APP_ENTERPRISE_URL_KEY = "githubAppEnterpriseBaseUrl"
KNOWN_HOSTS_CONFIGMAP = "argocd-ssh-known-hosts-cm"
KNOWN_HOSTS_KEY = "ssh_known_hosts"


def repository_secret_data(url: pulumi.Input[str], auth: GitAuth) -> dict[str, pulumi.Input[str]]:
    """The repository Secret's ``stringData``: the URL, ``type: git``, and the key or the App."""
    data: dict[str, pulumi.Input[str]] = {"type": "git", "url": url}
    if isinstance(auth, GitHubAppSecretOptions):
        data |= {
            GITHUB_APP_ID_KEY: str(auth.app_id),
            GITHUB_APP_INSTALLATION_ID_KEY: str(auth.installation_id),
            GITHUB_APP_PRIVATE_KEY_KEY: pulumi.Output.secret(auth.private_key),
        }
        if auth.base_url is not None:
            data[GITHUB_APP_ENTERPRISE_URL_KEY] = auth.base_url
        return data
    return data | {SSH_PRIVATE_KEY_KEY: pulumi.Output.secret(auth.private_key)}


def build_repository(
    name: str,
    secret_name: str,
    url: pulumi.Input[str],
    auth: GitAuth,
    namespace: NamespaceResource,
    parent: pulumi.Resource,
) -> k8s.core.v1.SecretPatch:
    """The repository Secret in Argo CD's namespace, labelled so that Argo CD reads it."""
    return fixed_secret(
        f"{name}-repository",
        secret_name,
        repository_secret_data(url, auth),
        namespace,
        parent,
        labels={SECRET_TYPE_LABEL: "repository"},
    )


def known_hosts_text(known_hosts: str, existing: str = "") -> str:
    """``existing``, GitHub's host keys and ``known_hosts``, each line once, in that order."""
    lines: list[str] = []
    for line in (*existing.splitlines(), *GITHUB_KNOWN_HOSTS.splitlines(), *known_hosts.splitlines()):
        if line.strip() and line.strip() not in lines:
            lines.append(line.strip())
    return "\n".join(lines) + "\n"


def build_known_hosts(
    name: str, known_hosts: pulumi.Input[str], namespace: NamespaceResource, parent: pulumi.Resource
) -> k8s.core.v1.ConfigMapPatch:
    """``argocd-ssh-known-hosts-cm``'s ``ssh_known_hosts``, for an Argo CD installed outside the stack.

    That ConfigMap is Argo CD's, and every repository it fetches over SSH is checked against it: upstream's
    install fills it with GitHub's, GitLab's, Bitbucket's and Azure DevOps' keys, and a team may have added
    its own. So the patch writes what it holds already (read at each ``up``), then GitHub's and the fleet's,
    each line once: it adds, never takes a host away. It is kept on destroy: a patch that gives its key up
    would take every host with it, and Argo CD's other repositories would stop fetching.
    """
    live = k8s.core.v1.ConfigMap.get(
        f"{name}-known-hosts-live",
        pulumi.Output.concat(namespace.metadata.name, "/", KNOWN_HOSTS_CONFIGMAP),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[namespace]),
    )
    existing = live.data.apply(lambda data: (data or {}).get(KNOWN_HOSTS_KEY) or "")
    text = pulumi.Output.all(existing, known_hosts).apply(
        lambda values: known_hosts_text(str(values[1]), existing=str(values[0]))
    )
    return fixed_config_map(
        f"{name}-known-hosts",
        KNOWN_HOSTS_CONFIGMAP,
        {KNOWN_HOSTS_KEY: text},
        namespace,
        parent,
        retain_on_delete=True,
    )
