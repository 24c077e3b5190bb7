"""The promotion guard's "dirty" is the engine's own ``git.dirty``, on the real engine.

The engine records an update as dirty when ``git status --porcelain -z`` prints anything
(``isGitWorkTreeDirty``, pkg/cmd/pulumi/metadata/metadata.go, v3.274.1): untracked files count. The guard
used to ignore them, so a module the program imports, never committed, ran on prod.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pulumi import automation as auto

from gitops_infra.automation import history, up
from gitops_infra.automation._state.git import uncommitted
from gitops_infra.errors import PromotionError

from ..support import git, workspace
from .conftest import SECRET_TOKEN, STACK, FixtureRepo

pytestmark = pytest.mark.engine

# The program imports a helper module when there is one: what an untracked file in a real project does.
IMPORTS_HELPER = "try:\n    import helper  # noqa: F401\nexcept ImportError:\n    pass\n"


def _untracked_helper(root: Path) -> None:
    (root / "helper.py").write_text("RUNS_ON = 'whatever stack this reaches'\n")


def _ignored_cache(root: Path) -> None:
    (root / "__pycache__").mkdir(exist_ok=True)
    (root / "__pycache__" / "stale.pyc").write_bytes(b"\0")


def _edited_readme(root: Path) -> None:
    (root / "README").write_text("edited, not committed\n")


def _untracked_hidden_by_config(root: Path) -> None:
    _untracked_helper(root)
    git(root, "config", "status.showUntrackedFiles", "no")


@pytest.mark.parametrize(
    ("change", "dirty"),
    [
        (_untracked_helper, True),
        (_ignored_cache, False),
        (_edited_readme, True),
        (_untracked_hidden_by_config, False),
    ],
)
def test_the_guard_calls_dirty_what_the_engine_records_as_dirty(
    repo: FixtureRepo, change: Callable[[Path], None], dirty: bool
) -> None:
    change(repo.root)
    assert bool(uncommitted(repo.root)) is dirty
    up(STACK, options=repo.options)
    assert history(STACK, options=repo.options)[0].dirty is dirty  # the engine's own record


def test_an_untracked_module_the_program_imports_is_refused_by_the_promotion_guard(
    repo: FixtureRepo, tmp_path: Path
) -> None:
    program = repo.root / "__main__.py"
    program.write_text(IMPORTS_HELPER + program.read_text())
    prod_files = tmp_path / "prod-files"
    prod_files.mkdir()
    auto.Stack.create("prod", workspace(repo.root, repo.env)).set_all_config(
        {
            "fixture:directory": auto.ConfigValue(str(prod_files)),
            "fixture:token": auto.ConfigValue(SECRET_TOKEN, secret=True),
            "fixture:files": auto.ConfigValue(json.dumps({"a": "prod"})),
        }
    )
    head = repo.commit("a prod stack; the program imports a helper if there is one")
    up(STACK, options=repo.options)  # dev proves the commit, from a clean tree
    assert not history(STACK, options=repo.options)[0].dirty
    _untracked_helper(repo.root)

    with pytest.raises(PromotionError) as refused:
        up("prod", options=repo.options, require_promoted_from=STACK)

    assert "'helper.py'" in str(refused.value) and (refused.value.stack, refused.value.commit) == (
        STACK,
        head,
    )
    assert history("prod", options=repo.options) == () and list(prod_files.iterdir()) == []
    (repo.root / "helper.py").unlink()
    assert up("prod", options=repo.options, require_promoted_from=STACK).commit == head
    assert not history("prod", options=repo.options)[0].dirty
