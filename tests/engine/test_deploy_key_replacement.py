"""A change that replaces the deploy key brings a new key pair, on the real engine.

Every input of GitHub's deploy key is replace-only, and GitHub refuses a key that is already registered
("key is already in use"). Turning image automation on or off flips ``read_only``, renaming the fleet
repository changes ``repository``: each replaces the deploy key create-before-delete, which, with the
same key pair, registers the same public key twice. The program (``deploy_key_fixture``) is the real
``DeployKey`` component with stand-ins for the GitHub and TLS providers that keep those contracts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from pulumi import automation as auto

from gitops_infra.automation import StackOptions, up

from ..support import REPO_ROOT, commit_all, init_repo, workspace, write_project

pytestmark = pytest.mark.engine

PROGRAM = REPO_ROOT / "tests" / "engine" / "deploy_key_fixture" / "__main__.py"


class Fleet:
    """The fixture stack: its config, its log of creates and deletes, and the stand-in GitHub's keys."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root, self.env = root, env
        self.log, self.registry = root.parent / "steps.log", root.parent / "github.json"
        self.options = StackOptions(work_dir=root, env=env)

    def stack(self) -> auto.Stack:
        return auto.Stack.select("dev", workspace(self.root, self.env))

    def up(self, **settings: str) -> list[str]:
        """``up`` with ``settings`` set (none: as it is); the creates and deletes it logged, in order."""
        if settings:
            self.stack().set_all_config({key: auto.ConfigValue(value) for key, value in settings.items()})
            commit_all(self.root, f"settings {settings}")
        self.log.write_text("")
        up("dev", options=self.options)
        return self.log.read_text().splitlines()

    def registered(self) -> list[dict[str, Any]]:
        return list(json.loads(self.registry.read_text()).values())

    def public_key(self) -> str:
        return str(self.stack().outputs()["publicKey"].value)


@pytest.fixture
def fleet(engine_env: dict[str, str], tmp_path: Path) -> Fleet:
    root = init_repo(tmp_path / "repo", "deploy key replacement")
    write_project(root, "deploy-key", virtualenv=sys.prefix)
    (root / "__main__.py").write_text(PROGRAM.read_text())
    (root / ".gitignore").write_text("__pycache__/\n")
    env = {key: value for key, value in engine_env.items() if key != "PATH"}
    env["PYTHONPATH"] = str(REPO_ROOT)  # the component under test is this checkout's
    auto.Stack.create("dev", workspace(root, env))
    made = Fleet(root, env)
    made.stack().set_all_config(
        {"log": auto.ConfigValue(str(made.log)), "registry": auto.ConfigValue(str(made.registry))}
    )
    made.up(repository="fleet", readOnly="true")
    return made


def _made_then_gone(steps: list[str]) -> tuple[str, str]:
    """The new key and the old one, checking the steps are a whole create-before-delete replacement."""
    assert len(steps) == 4, steps
    created, registered, unregistered, deleted = steps
    new, old = created.removeprefix("create key "), deleted.removeprefix("delete key ")
    assert created == f"create key {new}" and registered.startswith(f"register {new} on ")
    assert unregistered.startswith(f"unregister {old} from ") and deleted == f"delete key {old}"
    assert new != old
    return new, old


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"readOnly": "false"}, {"read_only": False, "repository": "fleet", "title": "flux-fleet"}),
        ({"repository": "platform-fleet"}, {"read_only": True, "repository": "platform-fleet"}),
        ({"title": "flux-prod"}, {"read_only": True, "title": "flux-prod"}),
    ],
    ids=["image-automation-on", "repository-renamed", "title-changed"],
)
def test_a_change_that_replaces_the_deploy_key_registers_a_new_key_before_the_old_goes(
    fleet: Fleet, change: dict[str, str], expected: dict[str, Any]
) -> None:
    before = fleet.public_key()

    new, old = _made_then_gone(fleet.up(**change))

    assert before.endswith(old) and fleet.public_key().endswith(new)
    (registered,) = fleet.registered()
    assert registered["key"] == fleet.public_key()
    assert {key: registered[key] for key in expected} == expected


def test_image_automation_off_again_and_a_rotation_each_bring_a_new_key(fleet: Fleet) -> None:
    first = fleet.public_key()
    _made_then_gone(fleet.up(readOnly="false"))
    _made_then_gone(fleet.up(readOnly="true"))
    _made_then_gone(fleet.up(rotation="2026-12"))

    (registered,) = fleet.registered()
    assert registered["read_only"] is True and registered["key"] == fleet.public_key() != first


def test_an_up_with_nothing_changed_keeps_the_key(fleet: Fleet) -> None:
    before = fleet.public_key()

    assert fleet.up() == []
    assert fleet.public_key() == before and len(fleet.registered()) == 1
