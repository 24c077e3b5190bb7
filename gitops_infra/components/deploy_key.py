"""``DeployKey``: an SSH key pair registered as a deploy key on a GitHub repository.

The key is ECDSA P-384 by default (what ``flux bootstrap`` generates) or ED25519 on request. It is
read-only unless Flux must push (image automation). Rotation is explicit: change ``rotation`` to any new
value and the next update replaces the key pair and the deploy key, creating the new ones before deleting
the old, so Flux is never without a working key (the Secret that holds it updates in place).

Every input of GitHub's deploy key is replace-only (``key``, ``read_only``, ``repository``, ``title``:
all ForceNew in terraform-provider-github, which pulumi-github wraps), and GitHub refuses a second
registration of a key that is in use ("key is already in use", terraform-provider-github #1316). So a
change that replaces the deploy key (image automation turned on or off, a renamed repository, a new
title) replaces the key pair too, exactly as a rotation does: the new deploy key is registered with a new
key, proven by Flux, and the old one deleted after. The first update after upgrading from a version
without this rule rotates the key once, the same way.

The GitHub provider comes from the caller, through ``opts`` (``providers=[github_provider]``) or the
ambient default provider.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi

from gitops_infra import checks
from gitops_infra._lazy import sdk
from gitops_infra.components._args import Problems
from gitops_infra.defaults import KeyAlgorithm

if TYPE_CHECKING:
    import pulumi_github as github
    import pulumi_tls as tls
else:
    github = sdk("pulumi_github")
    tls = sdk("pulumi_tls")

__all__ = ["GITHUB_KNOWN_HOSTS", "DeployKey", "DeployKeyArgs", "KeyAlgorithm"]

TYPE_TOKEN = "gitops-infra:index:DeployKey"

# GitHub's published SSH host keys (https://api.github.com/meta, "ssh_keys"; rotated RSA key of 2023).
GITHUB_KNOWN_HOSTS = "\n".join(
    [
        "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        "github.com ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezO"
        "mxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT/y6v0mKV0U2w0WZ2YB/++Tpockg=",
        "github.com ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQCj7ndNxQowgcQnjshcLrqPEiiphnt+VTTvDP6mHBL9j1aNU"
        "kY4Ue1gvwnGLVlOhGeYrnZaMgRK6+PKCUXaDbC7qtbW8gIkhL7aGCsOr/C56SJMy/BCZfxd1nWzAOxSDPgVsmerOBYfNqltV"
        "9/hWCqBywINIR+5dIg6JTJ72pcEpEjcYgXkE2YEFXV1JHnsKgbLWNlhScqb2UmyRkQyytRLtL+38TGxkxCflmO+5Z8CSSNY7"
        "GidjMIZ7Q4zMjA2n1nGrlTDkzwDCsw+wqFPGQA179cnfGWOWRVruj16z6XyvxvjJwbz0wQZ75XK5tKSb7FNyeIEs4TT4jk+S"
        "4dhPeAUC5y+bDYirYgM4GC7uEnztnZyaVWQ7B381AK4Qdrwt51ZqExKbQpTUNn+EjqoTwvqNj4kqx5QUCI0ThS/YkOxJCXmP"
        "UWZbhjpCg56i+2aB6CmK2JGhn57K5mj0MNdBXA4/WnwH6XoPWJzK5Nyu2zB3nAZp+S5hpQs+p1vN1/wsjk=",
    ]
)


# How each algorithm is spelled to ``tls.PrivateKey``: (algorithm, ecdsa_curve).
_TLS_ALGORITHMS: dict[KeyAlgorithm, tuple[str, str | None]] = {
    KeyAlgorithm.ECDSA_P384: ("ECDSA", "P384"),
    KeyAlgorithm.ED25519: ("ED25519", None),
}


@dataclass(frozen=True)
class DeployKeyArgs:
    """Inputs of ``DeployKey``.

    ``repository`` is the repository's name (the provider's owner applies). ``title`` defaults to
    ``flux-<component name>``. ``rotation``: change it to replace the key.
    """

    repository: pulumi.Input[str]
    read_only: bool = True
    algorithm: KeyAlgorithm = KeyAlgorithm.ECDSA_P384
    title: pulumi.Input[str] | None = None
    rotation: pulumi.Input[str] = ""
    known_hosts: str = GITHUB_KNOWN_HOSTS

    def __post_init__(self) -> None:
        problems = Problems("DeployKeyArgs")
        problems.gate("repository", checks.repository_name_problem, self.repository)
        problems.check(isinstance(self.algorithm, KeyAlgorithm), "algorithm", "must be a KeyAlgorithm")
        problems.gate("known_hosts", checks.known_hosts_problem, self.known_hosts)
        problems.raise_if_any()


class DeployKey(pulumi.ComponentResource):
    """A key pair and its GitHub deploy key: see the module docstring."""

    public_key: pulumi.Output[str]
    private_key: pulumi.Output[str]
    known_hosts: pulumi.Output[str]
    read_only: pulumi.Output[bool]
    key_pair: tls.PrivateKey
    deploy_key: github.RepositoryDeployKey

    def __init__(self, name: str, args: DeployKeyArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        algorithm, curve = _TLS_ALGORITHMS[args.algorithm]
        title = args.title if args.title is not None else f"flux-{name}"
        # The key pair is replaced whenever the deploy key would be (see the module docstring): its
        # trigger holds the rotation and every other replace-only input of the deploy key. The deploy
        # key's own trigger stays the rotation, as it was. delete_before_replace=False (the default,
        # spelled out) makes both create-before-delete.
        trigger = pulumi.Output.all(args.rotation, args.repository, title, args.read_only).apply(
            lambda values: json.dumps(
                {"rotation": values[0], "repository": values[1], "title": values[2], "readOnly": values[3]},
                sort_keys=True,
            )
        )
        self.key_pair = tls.PrivateKey(
            f"{name}-key",
            algorithm=algorithm,
            ecdsa_curve=curve,
            opts=pulumi.ResourceOptions(
                parent=self, replacement_trigger=trigger, delete_before_replace=False
            ),
        )
        rotate = pulumi.ResourceOptions(
            parent=self, replacement_trigger=args.rotation, delete_before_replace=False
        )
        self.deploy_key = github.RepositoryDeployKey(
            f"{name}-deploy-key",
            repository=args.repository,
            title=title,
            key=self.key_pair.public_key_openssh,
            read_only=args.read_only,
            opts=rotate,
        )
        self.public_key = self.key_pair.public_key_openssh
        # Secret whatever the provider does; and it resolves only once GitHub has the public half, so a
        # consumer (Flux's git-auth Secret) never starts with a key the repository does not accept yet.
        self.private_key = pulumi.Output.secret(
            pulumi.Output.all(self.deploy_key.id, self.key_pair.private_key_openssh).apply(
                lambda values: str(values[1])
            )
        )
        self.known_hosts = pulumi.Output.from_input(args.known_hosts)
        self.read_only = self.deploy_key.read_only.apply(lambda value: bool(value))
        self.register_outputs(
            {
                "publicKey": self.public_key,
                "privateKey": self.private_key,
                "knownHosts": self.known_hosts,
                "readOnly": self.read_only,
            }
        )
