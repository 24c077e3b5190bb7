"""What the real engine does with a rotation's resources: the order a credential change relies on.

The platform's rotation (``DeployKey`` → the git-auth Secret → the GitRepository that waits for Flux to
fetch with the new key) cannot run here for real: GitHub is not reachable. Its shape can, with dynamic
providers standing in (``rotation_fixture``): a key replaced create-before-delete, a Secret updated in
place, and a GitRepository whose update waits, and fails when Flux refuses the key. The log shows that
the engine deletes the old key only after the GitRepository's wait has ended, and not at all when the
wait failed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pulumi import automation as auto

from gitops_infra.automation import StackOptions, up
from gitops_infra.errors import OperationFailedError

from ..support import REPO_ROOT, commit_all, init_repo, workspace, write_project

pytestmark = pytest.mark.engine

PROGRAM = REPO_ROOT / "tests" / "engine" / "rotation_fixture" / "__main__.py"


class Rotation:
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root, self.env, self.log = root, env, root.parent / "steps.log"
        self.options = StackOptions(work_dir=root, env=env)

    def stack(self) -> auto.Stack:
        return auto.Stack.select("dev", workspace(self.root, self.env))

    def up(self, rotation: str, refused: str = "") -> list[str]:
        """``up`` with the key of ``rotation`` (Flux refusing the key ``refused``); the steps it logged."""
        stack = self.stack()
        stack.set_all_config(
            {
                "rotation": auto.ConfigValue(rotation),
                "refused": auto.ConfigValue(refused),
            }
        )
        commit_all(self.root, f"rotation {rotation}")
        self.log.write_text("")
        try:
            up("dev", options=self.options)
        finally:
            steps = self.log.read_text().splitlines()
        return steps

    def pending_deletion(self) -> list[str]:
        resources = self.stack().export_stack().deployment["resources"]
        return [r["id"] for r in resources if r.get("delete")]


def proven(key: str) -> list[str]:
    """The steps of a key made, written into the Secret and fetched with, in this order."""
    return [
        f"create key {key}",
        f"write secret key-{key}",
        f"wait for fetch with key-{key}",
        f"fetched with key-{key}",
    ]


@pytest.fixture
def rotation(engine_env: dict[str, str], tmp_path: Path) -> Rotation:
    root = init_repo(tmp_path / "repo", "rotation order")
    write_project(root, "rotation", virtualenv=sys.prefix)
    (root / "__main__.py").write_text(PROGRAM.read_text())
    (root / ".gitignore").write_text("__pycache__/\n")
    env = {key: value for key, value in engine_env.items() if key != "PATH"}
    auto.Stack.create("dev", workspace(root, env))
    made = Rotation(root, env)
    made.stack().set_config("log", auto.ConfigValue(str(made.log)))
    return made


def test_the_old_key_is_deleted_only_after_flux_fetched_with_the_new_one(rotation: Rotation) -> None:
    assert rotation.up("a") == [
        "create key a",
        "write secret key-a",
        "wait for fetch with key-a",
        "fetched with key-a",
    ]

    assert rotation.up("b") == [*proven("b"), "delete key a"]


def test_a_refused_key_fails_up_and_the_old_key_outlives_it(rotation: Rotation) -> None:
    rotation.up("a")

    with pytest.raises(OperationFailedError, match="Flux refused key-b"):
        rotation.up("b", refused="key-b")

    assert rotation.log.read_text().splitlines() == [
        "create key b",
        "write secret key-b",
        "wait for fetch with key-b",
    ]
    assert rotation.pending_deletion() == ["key-a"]  # not deleted: still registered on the git host

    # The next rotation is proven before either earlier key goes.
    steps = rotation.up("c")
    assert steps[:4] == [
        "create key c",
        "write secret key-c",
        "wait for fetch with key-c",
        "fetched with key-c",
    ]
    assert sorted(steps[4:]) == ["delete key a", "delete key b"]
    assert rotation.pending_deletion() == []
