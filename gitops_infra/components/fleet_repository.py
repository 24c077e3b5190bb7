"""``FleetRepository``: the GitHub repository Flux syncs, optionally created, and its path scaffolded.

With an empty fleet repository the root Kustomization fails until someone creates ``clusters/<env>``.
Scaffolding commits ``<path>/kustomization.yaml`` (an empty ``resources: []`` list) and a short
``<path>/README.md`` on the sync branch, so a first ``up`` goes green. It never overwrites what a person
wrote: a file that exists is left as it is (``overwrite_on_create=False``), and later edits to the files
are the fleet's, not this stack's (``ignore_changes``).

Creating the repository is opt-in too (``create``). A created repository is kept on ``destroy``
(``retain_on_delete``): tearing down a cluster never deletes a fleet's history.

The GitHub provider comes through ``opts``, as for ``DeployKey``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import pulumi
import pulumi_github as github

from gitops_infra import checks
from gitops_infra.components._args import Problems
from gitops_infra.contract import CONTRACT_KEYS

__all__ = [
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
COMMIT_MESSAGE = "Scaffold {path} for Flux (gitops-infra)"


class RepositoryVisibility(StrEnum):
    """Who may see a created fleet repository. Never public: it describes your clusters."""

    PRIVATE = "private"
    INTERNAL = "internal"


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

    def __post_init__(self) -> None:
        problems = Problems("FleetRepositoryArgs")
        problems.gate("repository", checks.repository_name_problem, self.repository)
        problems.gate("path", checks.relative_path_problem, self.path)
        problems.gate("branch", checks.branch_problem, self.branch)
        problems.check(
            self.create is None or isinstance(self.create, RepositoryVisibility),
            "create",
            "must be a RepositoryVisibility (private or internal), or None",
        )
        problems.raise_if_any()


def scaffold_files(path: str, environment: str | None = None) -> dict[str, str]:
    """The starter files for ``path``, by their path in the repository."""
    path = path.strip("/")
    variables = ", ".join(f"`${{{key}}}`" for key in CONTRACT_KEYS)
    target = f"the {environment} cluster" if environment else "its cluster"
    readme = (
        f"# {path}\n\n"
        f"Flux syncs this directory to {target}. List your manifests, or the Kustomizations of your\n"
        f"apps, under `resources` in `{SCAFFOLD_KUSTOMIZATION}`.\n\n"
        f"Manifests here may use the environment contract's values: {variables}.\n\n"
        "gitops-infra created these two files once and never changes them again: they are yours.\n"
    )
    kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"
    return {f"{path}/{SCAFFOLD_KUSTOMIZATION}": kustomization, f"{path}/{SCAFFOLD_README}": readme}


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
        if args.create is not None:
            self.repository = github.Repository(
                f"{name}-repository",
                name=args.repository,
                visibility=args.create.value,
                auto_init=True,  # the first commit makes the default branch the files go onto
                description="Fleet repository synced by Flux (gitops-infra)",
                opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True),
            )
            repository_name = self.repository.name
        self.repository_name = repository_name
        self.files = []
        if args.scaffold:
            message = COMMIT_MESSAGE.format(path=args.path.strip("/"))
            for file, content in scaffold_files(args.path, args.environment).items():
                role = "readme" if file.endswith(SCAFFOLD_README) else "kustomization"
                self.files.append(
                    github.RepositoryFile(
                        f"{name}-scaffold-{role}",
                        repository=self.repository_name,
                        branch=args.branch,
                        file=file,
                        content=content,
                        commit_message=message,
                        overwrite_on_create=False,
                        opts=pulumi.ResourceOptions(parent=self, ignore_changes=["content", "commitMessage"]),
                    )
                )
        self.register_outputs(
            {"repositoryName": self.repository_name, "files": [file.file for file in self.files]}
        )
