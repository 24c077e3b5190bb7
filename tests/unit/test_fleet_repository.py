"""FleetRepository: the fleet path scaffolded (never overwriting), the repository created (never deleted),
and how the platform wires both from `git.scaffold` and `git.createRepository`."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_github as github
import pytest
import yaml

from gitops_infra.checks import DNS_LABEL_HINT
from gitops_infra.components.fleet_repository import (
    DESCRIPTION,
    FleetRepository,
    FleetRepositoryArgs,
    RepositoryVisibility,
    scaffold_files,
)
from gitops_infra.config import StackSecrets, load_config
from gitops_infra.contract import CLUSTER_SECRET_STORE_KEY, CONTRACT_KEYS
from gitops_infra.errors import ConfigError
from gitops_infra.platform import build_platform

from .harness import run

FILE = "github:index/repositoryFile:RepositoryFile"
REPOSITORY = "github:index/repository:Repository"
DEPLOY_KEY = "github:index/repositoryDeployKey:RepositoryDeployKey"
KUSTOMIZATION = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"
GIT_REPOSITORY = "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository"


def test_the_scaffold_is_an_empty_kustomization_and_a_readme() -> None:
    files = scaffold_files("clusters/dev/", "dev")
    assert set(files) == {"clusters/dev/kustomization.yaml", "clusters/dev/README.md"}
    assert yaml.safe_load(files["clusters/dev/kustomization.yaml"]) == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [],
    }
    readme = files["clusters/dev/README.md"]
    assert readme.startswith("# clusters/dev\n") and "the dev cluster" in readme
    # Every key the contract always holds (the store only when External Secrets is on).
    assert all(f"${{{key}}}" in readme for key in CONTRACT_KEYS if key != CLUSTER_SECRET_STORE_KEY)
    assert CLUSTER_SECRET_STORE_KEY not in readme
    # Flux substitutes every ${...} under the path, strictly from kustomize-controller 1.9: say how not to.
    assert "$${VAR}" in readme and "kustomize.toolkit.fluxcd.io/substitute: disabled" in readme


def fleet(
    git_files: dict[str, str] | None = None, repositories: dict[str, str] | None = None, **overrides: Any
) -> Any:
    """The graph of a FleetRepository, on a GitHub that holds ``git_files`` (path: last commit message)
    and ``repositories`` (name: description)."""

    def program() -> FleetRepository:
        provider = github.Provider("github", owner="acme")
        args = FleetRepositoryArgs(**{"repository": "fleet", "path": "clusters/dev", **overrides})
        return FleetRepository("fleet", args, opts=pulumi.ResourceOptions(providers=[provider]))

    return run(
        program, outputs=lambda f: {"name": f.repository_name}, git_files=git_files, repositories=repositories
    ).graph


OURS = "Scaffold clusters/dev for Flux (gitops-infra)"
README, KUSTOMIZATION_FILE = "clusters/dev/README.md", "clusters/dev/kustomization.yaml"


def test_scaffold_never_overwrites_and_leaves_later_edits_alone() -> None:
    graph = fleet(branch="release")
    files = graph.of_type(FILE)
    assert sorted(f.name for f in files) == ["fleet-scaffold-kustomization", "fleet-scaffold-readme"]
    for file in files:
        assert file.inputs["repository"] == "fleet"
        assert file.inputs["branch"] == "release"
        assert file.inputs["overwriteOnCreate"] is False  # a file someone wrote stays as it is
        # Later edits are the fleet's, and so are the files: destroy leaves them in git.
        assert set(file.ignore_changes) == {"content", "commitMessage", "overwriteOnCreate"}
        assert file.retain_on_delete
        assert file.inputs["commitMessage"] == "Scaffold clusters/dev for Flux (gitops-infra)"
        assert file.parent == graph.one("gitops-infra:index:FleetRepository").urn
        assert file.provider.startswith(graph.one("pulumi:providers:github").urn + "::")
    assert graph.of_type(REPOSITORY) == []


def test_a_file_the_fleet_already_holds_is_left_alone_not_refused() -> None:
    # GitHub refuses to create a file that exists (overwrite_on_create=False): `up` failed on a fleet that
    # already had its path. The existing file is now the fleet's and not managed; the missing one is made.
    graph = fleet(git_files={README: "docs: our own README"})
    (file,) = graph.of_type(FILE)
    assert file.inputs["file"] == KUSTOMIZATION_FILE and file.inputs["overwriteOnCreate"] is False


def test_a_second_up_keeps_the_scaffold_and_a_destroy_then_up_writes_it_again() -> None:
    # The files this stack wrote, unedited since: still managed (no change on a second `up`), and after a
    # destroy (they stay in git) written again in their own place instead of refused.
    graph = fleet(git_files={README: OURS, KUSTOMIZATION_FILE: OURS})
    files = graph.of_type(FILE)
    assert len(files) == 2 and all(f.inputs["overwriteOnCreate"] is True for f in files)
    assert all(f.retain_on_delete for f in files)


def test_a_scaffolded_file_edited_since_becomes_the_fleets() -> None:
    graph = fleet(git_files={README: OURS, KUSTOMIZATION_FILE: "add the shop"})
    assert [f.inputs["file"] for f in graph.of_type(FILE)] == [README]


def test_fleet_files_edited_after_scaffolding_survive_the_next_up_and_a_destroy() -> None:
    # The second act across two plans. First `up`: both files written, each recorded with retainOnDelete.
    first = fleet()
    assert all(f.retain_on_delete for f in first.of_type(FILE))
    # Someone edits the kustomization. The next plan no longer declares it: it is the fleet's now.
    second = fleet(git_files={README: OURS, KUSTOMIZATION_FILE: "add the shop"})
    assert [f.inputs["file"] for f in second.of_type(FILE)] == [README]
    # What the engine then does cannot run under mocks; upstream (pulumi v3.274.1,
    # pkg/resource/deploy/step.go, DeleteStep.Apply) decides by the *recorded* state: a resource whose
    # state says retainOnDelete is dropped from the state without the provider's Delete, whether it left
    # the program or the stack is destroyed. So neither that `up` nor a `destroy` commits a deletion, and
    # neither meets GitHub's 409 on the edited file's stale sha (terraform-provider-github deletes a
    # RepositoryFile with the sha in its state). The README's file is still declared with retainOnDelete.
    assert all(f.retain_on_delete for f in second.of_type(FILE))


def test_a_created_repository_is_private_initialised_and_kept_on_destroy() -> None:
    graph = fleet(create=RepositoryVisibility.INTERNAL)
    repository = graph.one(REPOSITORY)
    assert repository.inputs["name"] == "fleet"
    assert repository.inputs["visibility"] == "internal"
    assert repository.inputs["autoInit"] is True
    assert repository.retain_on_delete is True  # a destroy never deletes someone's fleet history
    for file in graph.of_type(FILE):
        assert repository.urn in file.dependencies


def test_a_repository_this_stack_made_is_taken_back_after_a_destroy() -> None:
    # Kept on destroy, it made the next `up` fail: GitHub refuses to create a name it holds.
    fresh = fleet(create=RepositoryVisibility.PRIVATE).one(REPOSITORY)
    assert fresh.import_id == ""
    ours = fleet(create=RepositoryVisibility.PRIVATE, repositories={"fleet": DESCRIPTION}).one(REPOSITORY)
    assert ours.import_id == "fleet" and "autoInit" in ours.ignore_changes and ours.retain_on_delete


def test_a_repository_someone_else_made_is_used_not_managed() -> None:
    graph = fleet(create=RepositoryVisibility.PRIVATE, repositories={"fleet": "the platform team's fleet"})
    assert graph.of_type(REPOSITORY) == []
    assert {f.inputs["repository"] for f in graph.of_type(FILE)} == {"fleet"}


def test_create_without_scaffold_makes_only_the_repository() -> None:
    graph = fleet(create=RepositoryVisibility.PRIVATE, scaffold=False)
    assert graph.one(REPOSITORY).inputs["visibility"] == "private"
    assert graph.of_type(FILE) == []


def test_args_are_checked() -> None:
    with pytest.raises(ConfigError) as info:
        FleetRepositoryArgs(repository="my fleet", path="/abs", create="public")  # type: ignore[arg-type]
    problems = info.value.problems
    assert problems[0] == "FleetRepositoryArgs.repository: must be a repository name"
    assert problems[1].startswith("FleetRepositoryArgs.path: ")
    assert problems[2].startswith("FleetRepositoryArgs.create: must be a RepositoryVisibility")


# -- from the stack config -----------------------------------------------------------------------------


def test_scaffold_and_create_are_off_by_default(minimal: dict[str, Any]) -> None:
    config = load_config(minimal, stack="test")
    assert config.git.scaffold is False and config.git.create_repository is None
    graph = run(lambda: build_platform(config)).graph
    assert graph.of_type(FILE) == [] and graph.of_type(REPOSITORY) == []


def test_the_platform_scaffolds_before_flux_syncs(minimal: dict[str, Any]) -> None:
    minimal["git"] |= {"scaffold": True, "createRepository": {"visibility": "private"}, "branch": "live"}
    graph = run(lambda: build_platform(load_config(minimal, stack="test"))).graph
    files = graph.of_type(FILE)
    assert {f.inputs["file"] for f in files} == {
        "clusters/test/kustomization.yaml",
        "clusters/test/README.md",
    }
    assert {f.inputs["branch"] for f in files} == {"live"}
    # A first `up` on an empty repository goes green: the path exists before Flux fetches and looks.
    for sync_object in (graph.one(KUSTOMIZATION), graph.one(GIT_REPOSITORY)):
        assert all(f.urn in sync_object.dependencies for f in files), sync_object.name
    # The deploy key is registered on the repository once it exists.
    repository = graph.one(REPOSITORY)
    assert repository.urn in graph.one(DEPLOY_KEY).dependencies


def test_scaffold_works_with_an_existing_deploy_key(minimal: dict[str, Any]) -> None:
    minimal["git"] |= {"scaffold": True, "deployKey": {"existing": {"privateKey": "fleetKey"}}}

    def program() -> Any:
        secrets = StackSecrets(deploy_private_key=pulumi.Output.secret("mock-key"))
        return build_platform(load_config(minimal, stack="test", secrets=secrets))

    graph = run(program).graph
    assert len(graph.of_type(FILE)) == 2
    assert graph.of_type(DEPLOY_KEY) == []  # the key stays the one registered by hand


@pytest.mark.parametrize("git", [{"scaffold": True}, {"createRepository": {}}])
def test_scaffold_and_create_need_the_github_repository(minimal: dict[str, Any], git: dict[str, Any]) -> None:
    minimal["git"] = {
        "url": "ssh://git@git.example.com/fleet.git",
        "knownHosts": "git.example.com ssh-ed25519 AAAA",
        "deployKey": {"existing": {"privateKey": "fleetKey"}},
        **git,
    }
    with pytest.raises(ConfigError) as info:
        load_config(minimal, stack="test")
    assert any(
        p.startswith("gitops-infra:git: ") and "set owner and repository" in p for p in info.value.problems
    )


def test_only_private_or_internal_repositories_are_created(minimal: dict[str, Any]) -> None:
    minimal["git"]["createRepository"] = {"visibility": "public"}
    with pytest.raises(ConfigError) as info:
        load_config(minimal, stack="test")
    assert any("git.createRepository.visibility" in p for p in info.value.problems)


# -- the tenants/ layout -------------------------------------------------------------------------------

TENANTS = {"shop": "tenants/shop", "ads": "apps/ads"}
TENANT_OURS = "Scaffold tenants/shop for Flux (gitops-infra)"
SHOP, ADS, LAYOUT = "tenants/shop/kustomization.yaml", "apps/ads/kustomization.yaml", "tenants/README.md"


def test_each_tenant_path_gets_an_empty_kustomization_and_tenants_a_readme() -> None:
    files = scaffold_files("clusters/dev", "dev", TENANTS)
    assert set(files) == {KUSTOMIZATION_FILE, README, LAYOUT, SHOP, ADS}
    # No resources: kustomize-controller builds nothing and is Ready, where a missing path is
    # "kustomization path not found" (git keeps no empty directory).
    for file in (SHOP, ADS):
        assert yaml.safe_load(files[file]) == yaml.safe_load(files[KUSTOMIZATION_FILE])
    assert files[SHOP].startswith("# Tenant shop: Flux applies what this lists as shop-reconciler")
    readme = files[LAYOUT]
    # Where a team writes, what is refused, and how it is onboarded.
    assert "`tenants/<name>/`" in readme and "`<name>-reconciler`" in readme
    for refused in ("another namespace", "cluster-scoped", "sourceRef.namespace", "remote base"):
        assert refused in readme, refused
    assert "`gitops-infra:tenants`" in readme
    assert all(f"${{{key}}}" in readme for key in CONTRACT_KEYS if key != CLUSTER_SECRET_STORE_KEY)
    # Without tenants, the scaffold is what it was.
    assert set(scaffold_files("clusters/dev", "dev", {})) == {KUSTOMIZATION_FILE, README}


def test_tenant_files_are_scaffolded_under_the_same_rules() -> None:
    graph = fleet(tenants=TENANTS)
    files = {f.name: f for f in graph.of_type(FILE)}
    assert sorted(files) == [
        "fleet-scaffold-kustomization",
        "fleet-scaffold-readme",
        "fleet-scaffold-tenant-ads",
        "fleet-scaffold-tenant-shop",
        "fleet-scaffold-tenants-readme",
    ]
    assert files["fleet-scaffold-tenant-shop"].inputs["file"] == SHOP
    assert files["fleet-scaffold-tenant-ads"].inputs["file"] == ADS
    assert files["fleet-scaffold-tenants-readme"].inputs["file"] == LAYOUT
    # Each directory's own commit message: what tells the scaffold's file from a team's edit.
    assert files["fleet-scaffold-tenant-shop"].inputs["commitMessage"] == TENANT_OURS
    assert files["fleet-scaffold-tenants-readme"].inputs["commitMessage"] == (
        "Scaffold tenants for Flux (gitops-infra)"
    )
    for file in files.values():
        assert file.inputs["overwriteOnCreate"] is False
        assert set(file.ignore_changes) == {"content", "commitMessage", "overwriteOnCreate"}
        assert file.retain_on_delete


def test_a_teams_edits_are_never_fought_and_the_scaffolds_own_file_stays_managed() -> None:
    # Day 2: the team wrote its kustomization (shop), the scaffold's own is unedited (ads), and the
    # layout README was written by hand before the first `up`.
    graph = fleet(
        tenants=TENANTS,
        git_files={
            SHOP: "shop: add the storefront",
            ADS: "Scaffold apps/ads for Flux (gitops-infra)",
            LAYOUT: "tenants: our own onboarding notes",
        },
    )
    files = {f.inputs["file"]: f for f in graph.of_type(FILE)}
    assert SHOP not in files and LAYOUT not in files  # the team's: left as they are, not managed
    assert files[ADS].inputs["overwriteOnCreate"] is True  # still the scaffold's: no change on this `up`


def test_a_tenant_removed_from_the_config_leaves_its_directory_and_comes_back_as_it_was() -> None:
    # First `up` with shop: its file is recorded with retainOnDelete.
    first = fleet(tenants={"shop": "tenants/shop"})
    (shop,) = [f for f in first.of_type(FILE) if f.inputs["file"] == SHOP]
    assert shop.retain_on_delete
    # shop is removed: nothing of it is declared. The engine drops a retained resource from the state
    # without the provider's Delete (see the test above on edited files), so no deletion is committed.
    second = fleet(tenants={}, git_files={SHOP: "shop: add the storefront"})
    assert {f.inputs["file"] for f in second.of_type(FILE)} == {README, KUSTOMIZATION_FILE}
    # Added back: the team's directory is synced as it is, never overwritten.
    third = fleet(tenants={"shop": "tenants/shop"}, git_files={SHOP: "shop: add the storefront"})
    assert SHOP not in {f.inputs["file"] for f in third.of_type(FILE)}


def test_tenant_args_are_checked() -> None:
    with pytest.raises(ConfigError) as info:
        FleetRepositoryArgs(
            repository="fleet",
            path="clusters/dev",
            tenants={"Shop": "tenants/shop", "ads": "/abs", "ops": "clusters/dev/ops"},
        )
    assert list(info.value.problems) == [
        "FleetRepositoryArgs.tenants['Shop']: " + DNS_LABEL_HINT,
        "FleetRepositoryArgs.tenants['ads']: must be a relative path inside the repository, without '..' or "
        "whitespace",
        "FleetRepositoryArgs.tenants['ops']: holds or lies inside path: Flux would apply it twice",
    ]


def test_the_platform_scaffolds_the_fleets_tenants_only(minimal: dict[str, Any]) -> None:
    minimal["git"] |= {"scaffold": True}
    minimal["tenants"] = [
        {"name": "shop"},
        {"name": "ads", "source": {"path": "apps/ads"}},
        {
            "name": "search",
            "source": {
                "repository": {
                    "url": "ssh://git@git.example.com/search.git",
                    "knownHosts": "git.example.com ssh-ed25519 AAAA",
                    "deployKey": {"existing": {"privateKey": "searchKey"}},
                }
            },
        },
    ]
    minimal["searchKey"] = "mock-openssh-private-key-search"
    graph = run(lambda: build_platform(load_config(minimal, stack="test"))).graph
    files = graph.of_type(FILE)
    # search syncs from a repository of its own: nothing of it is written to the fleet.
    assert {f.inputs["file"] for f in files} == {
        "clusters/test/kustomization.yaml",
        "clusters/test/README.md",
        LAYOUT,
        SHOP,
        ADS,
    }
    # The paths exist before Flux syncs, and the tenants come after Flux.
    root = graph.one(KUSTOMIZATION, "gitops-test-flux-kustomization")
    assert all(f.urn in root.dependencies for f in files)
