"""Promotion on the real engine: dev's proven commit is what reaches prod, and the prod pipeline's guard."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from pulumi import automation as auto

from gitops_infra.automation import (
    StackOptions,
    destroy,
    history,
    promote,
    refresh,
    rollback_to_commit,
    up,
)
from gitops_infra.cli import EXIT_ERROR, EXIT_OK, main
from gitops_infra.errors import CommitNotFoundError, OperationFailedError, PromotionError

from ..support import git, workspace
from .conftest import SECRET_TOKEN, FixtureRepo

pytestmark = pytest.mark.engine


def _add_prod(repo: FixtureRepo, tmp_path: Path) -> Path:
    """A prod stack beside dev, in its own directory of files, committed with the project."""
    prod_dir = tmp_path / "prod-files"
    prod_dir.mkdir()
    stack = auto.Stack.create("prod", workspace(repo.root, repo.env))
    stack.set_all_config(
        {
            "fixture:directory": auto.ConfigValue(str(prod_dir)),
            "fixture:token": auto.ConfigValue(SECRET_TOKEN, secret=True),
            "fixture:files": auto.ConfigValue(json.dumps({"a": "prod-one"})),
        }
    )
    return prod_dir


def _on_disk(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(directory.iterdir())}


def _set_prod_files(repo: FixtureRepo, files: dict[str, str]) -> None:
    workspace(repo.root, repo.env).set_config("prod", "fixture:files", auto.ConfigValue(json.dumps(files)))


def test_promote_takes_devs_last_update_to_prod_not_the_work_tree(repo: FixtureRepo, tmp_path: Path) -> None:
    prod_dir = _add_prod(repo, tmp_path)
    proven = repo.commit("C1: a prod stack")
    up("dev", options=repo.options)
    # Work goes on after dev's update: the next commit changes prod's config too, but is proven nowhere.
    _set_prod_files(repo, {"a": "prod-two"})
    head = repo.commit("C2: not deployed anywhere yet")

    result = promote("dev", "prod", options=repo.options)

    assert result.commit == proven
    evidence = result.evidence
    assert evidence is not None and (evidence.source, evidence.commit, evidence.version) == ("dev", proven, 1)
    assert evidence.age_seconds is not None and evidence.age_seconds >= 0
    assert (evidence.drift, evidence.gitops, evidence.max_age_seconds) == (None, None, None)  # not asked for
    assert _on_disk(prod_dir) == {"a": "prod-one"}  # C1's Pulumi.prod.yaml, not C2's
    latest = history("prod", options=repo.options)[0]
    assert latest.commit == proven and f"promote {proven[:12]} from dev" in latest.message
    assert repo.head() == head and git(repo.root, "status", "--porcelain") == ""
    assert len(repo.worktrees()) == 1


def test_promote_refuses_a_stale_drifted_or_failed_source(repo: FixtureRepo, tmp_path: Path) -> None:
    prod_dir = _add_prod(repo, tmp_path)
    repo.commit("a prod stack")
    with pytest.raises(PromotionError, match="stack 'dev' has no deployment to promote"):
        promote("dev", "prod", options=repo.options)
    with pytest.raises(PromotionError, match="that is one stack"):
        promote("dev", "dev", options=repo.options)

    up("dev", options=repo.options)
    # A stack without Flux cannot show a healthy GitOps layer; an update older than max_age is stale.
    with pytest.raises(PromotionError, match="--require-healthy: it bootstraps no Flux") as unhealthy:
        promote("dev", "prod", options=repo.options, require_healthy=True)
    assert unhealthy.value.evidence.gitops is None and unhealthy.value.evidence.version == 1
    time.sleep(1.1)
    with pytest.raises(
        PromotionError, match=r"--max-age 1s: its last successful update \(version 1\) ended"
    ) as old:
        promote("dev", "prod", options=repo.options, max_age=timedelta(seconds=1))
    assert old.value.evidence.age_seconds > 1 and old.value.evidence.max_age_seconds == 1
    (repo.files_dir / "a").write_text("edited out of band")
    with pytest.raises(
        PromotionError, match="--require-no-drift: it has drifted from its last update"
    ) as drifted:
        promote("dev", "prod", options=repo.options, require_no_drift=True, max_age=timedelta(hours=1))
    assert drifted.value.evidence.drift is True and drifted.value.evidence.max_age_seconds == 3600

    refresh("dev", options=repo.options)  # now the newest deployment is a refresh, not the update
    with pytest.raises(PromotionError, match=r"is version 2 \(refresh, succeeded\), not a successful update"):
        promote("dev", "prod", options=repo.options)

    repo.configure({"a": "one", "b": "two"}, fail="the program broke")
    repo.commit("a broken program")
    with pytest.raises(OperationFailedError):
        up("dev", options=repo.options)
    with pytest.raises(PromotionError, match=r"is version 3 \(update, failed\), not a successful update"):
        promote("dev", "prod", options=repo.options)
    assert _on_disk(prod_dir) == {}
    assert history("prod", options=repo.options) == ()


def test_the_require_promoted_from_guard_refuses_then_allows(repo: FixtureRepo, tmp_path: Path) -> None:
    prod_dir = _add_prod(repo, tmp_path)
    head = repo.commit("a prod stack")

    with pytest.raises(PromotionError) as info:
        up("prod", options=repo.options, require_promoted_from="dev")
    assert f"commit {head[:12]} has no successful update on stack 'dev'" in str(info.value)
    assert (info.value.stack, info.value.commit) == ("dev", head)
    assert _on_disk(prod_dir) == {} and history("prod", options=repo.options) == ()

    up("dev", options=repo.options)
    (repo.root / "__main__.py").write_text((repo.root / "__main__.py").read_text() + "\n# local edit\n")
    with pytest.raises(PromotionError, match="has uncommitted changes"):
        up("prod", options=repo.options, require_promoted_from="dev")
    git(repo.root, "checkout", "--", "__main__.py")

    result = up("prod", options=repo.options, require_promoted_from="dev")
    assert result.commit == head and _on_disk(prod_dir) == {"a": "prod-one"}


def test_cli_promote_and_the_guard(repo: FixtureRepo, tmp_path: Path) -> None:
    _add_prod(repo, tmp_path)
    head = repo.commit("a prod stack")

    def cli(*args: str) -> tuple[int, dict[str, object]]:
        result = CliRunner(env=repo.env).invoke(main, [*args, "--cwd", str(repo.root), "--json"])
        return result.exit_code, json.loads(result.stdout)

    code, document = cli("up", "prod", "--yes", "--require-promoted-from", "dev")
    assert code == EXIT_ERROR and document["error"]["type"] == "PromotionError"  # type: ignore[index]
    code, document = cli("up", "prod", "--yes", "--require-promoted-from", "")
    assert code == EXIT_ERROR and document["error"]["type"] == "UsageError"  # type: ignore[index]

    up("dev", options=repo.options)
    # Markdown first, while the promotion changes things: no progress line comes before the document.
    markdown = CliRunner(env=repo.env).invoke(
        main, ["promote", "dev", "prod", "--yes", "--format", "markdown", "--cwd", str(repo.root)]
    )
    assert markdown.exit_code == EXIT_OK, markdown.output
    assert markdown.stdout.startswith(f"### Promoted `{head[:12]}` to `prod`"), markdown.stdout
    assert "| create |" in markdown.stdout, markdown.stdout
    assert "| source | `dev` |" in markdown.stdout and f"| commit | `{head}` |" in markdown.stdout
    code, document = cli("promote", "dev", "prod", "--yes", "--max-age", "1h", "--require-no-drift")
    assert code == EXIT_OK and document["commit"] == head and document["stack"] == "prod"
    evidence = document["evidence"]
    assert evidence["commit"] == head and evidence["drift"] is False and evidence["max_age_seconds"] == 3600  # type: ignore[index]
    code, document = cli("promote", "dev", "prod")  # no --yes and no terminal
    assert code == EXIT_ERROR and document["error"]["type"] == "UsageError"  # type: ignore[index]


def test_a_dirty_dev_run_proves_nothing_to_the_guard_or_to_promote(repo: FixtureRepo, tmp_path: Path) -> None:
    # The repro: a broken change is committed; dev runs the old program from the work tree instead.
    prod_dir = _add_prod(repo, tmp_path)
    repo.commit("a prod stack")
    program = repo.root / "__main__.py"
    good = program.read_text()
    program.write_text(good + '\nraise RuntimeError("the committed change is broken")\n')
    broken = repo.commit("a broken change")
    program.write_text(good)  # uncommitted: what dev runs is not the commit
    up("dev", options=repo.options)
    git(repo.root, "checkout", "--", ".")

    for attempt in (
        lambda: up("prod", options=repo.options, require_promoted_from="dev"),
        lambda: promote("dev", "prod", options=repo.options),
    ):
        with pytest.raises(PromotionError) as info:
            attempt()
        assert "ran from a work tree with uncommitted changes" in str(info.value)
        assert (info.value.stack, info.value.commit) == ("dev", broken)
    assert _on_disk(prod_dir) == {} and history("prod", options=repo.options) == ()
    assert history("dev", options=repo.options)[0].dirty  # and `history --json` says so

    # From a clean tree the broken commit fails on dev, so it is never proven at all.
    with pytest.raises(OperationFailedError):
        up("dev", options=repo.options)
    with pytest.raises(PromotionError):
        up("prod", options=repo.options, require_promoted_from="dev")


def test_the_guard_takes_promotes_rule(repo: FixtureRepo, tmp_path: Path) -> None:
    prod_dir = _add_prod(repo, tmp_path)
    first = repo.commit("a prod stack")
    with pytest.raises(PromotionError, match="that is one stack; a stack cannot prove itself"):
        up("dev", options=repo.options, require_promoted_from="dev")

    up("dev", options=repo.options)
    repo.configure({"a": "one", "c": "a file the first commit lacks"})
    repo.commit("a second file")
    up("dev", options=repo.options)
    rollback_to_commit("dev", first, options=repo.options)  # dev moved away from the head again
    with pytest.raises(PromotionError, match=r"but has moved on since: its newest deployment is version 3"):
        up("prod", options=repo.options, require_promoted_from="dev")

    git(repo.root, "checkout", "-q", first)  # what dev runs now: accepted
    assert up("prod", options=repo.options, require_promoted_from="dev").commit == first

    destroy("dev", options=repo.options, confirm="dev")
    with pytest.raises(PromotionError, match=r"moved on since: its newest deployment is version 4 \(destroy"):
        up("prod", options=repo.options, require_promoted_from="dev")
    assert _on_disk(prod_dir) == {"a": "prod-one"}


def test_the_guard_sees_an_edit_hidden_from_git_status(repo: FixtureRepo, tmp_path: Path) -> None:
    prod_dir = _add_prod(repo, tmp_path)
    repo.commit("a prod stack")
    up("dev", options=repo.options)
    git(repo.root, "update-index", "--skip-worktree", "Pulumi.prod.yaml")
    _set_prod_files(repo, {"a": "not what dev proved"})  # git status shows nothing now
    with pytest.raises(PromotionError, match="--skip-worktree"):
        up("prod", options=repo.options, require_promoted_from="dev")
    assert _on_disk(prod_dir) == {} and history("prod", options=repo.options) == ()


def test_promote_refuses_a_commit_that_predates_the_targets_config(repo: FixtureRepo, tmp_path: Path) -> None:
    up("dev", options=repo.options)  # dev's commit has no Pulumi.prod.yaml yet
    prod_dir = _add_prod(repo, tmp_path)
    repo.commit("a prod stack")
    with pytest.raises(CommitNotFoundError, match=r"has no Pulumi\.prod\.yaml: it predates stack 'prod'"):
        promote("dev", "prod", options=repo.options)
    assert _on_disk(prod_dir) == {} and history("prod", options=repo.options) == ()
    assert len(repo.worktrees()) == 1


def test_a_shallow_clone_says_the_commit_is_not_in_it(repo: FixtureRepo, tmp_path: Path) -> None:
    _add_prod(repo, tmp_path)
    proven = repo.commit("a prod stack")
    up("dev", options=repo.options)
    repo.configure({"a": "one", "c": "later"})
    repo.commit("the next change")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo.root}", str(shallow))
    options = StackOptions(work_dir=shallow, env=repo.env)
    with pytest.raises(CommitNotFoundError) as info:
        promote("dev", "prod", options=options)
    assert f"commit {proven[:12]}" in str(info.value) and "is not in this clone" in str(info.value)
    assert "fetch-depth: 0" in str(info.value) and "predates" not in str(info.value)
