"""The backend `pulumi login` stored, on the real engine: the stack is operated where Pulumi finds it.

Pulumi takes ``PULUMI_BACKEND_URL``, else the project's ``backend.url``, else the stored login
(``GetCurrentCloudURLWithSource``, pkg/workspace/creds.go, v3.274.1). Here neither of the first two is
set: the real ``pulumi login`` chooses the backend, and the bare ``pulumi`` is the judge of where it is.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gitops_infra.automation import StackOptions, history, up
from gitops_infra.automation._state.target import DEFAULT_STATE_DIR
from gitops_infra.errors import StackNotFoundError

from ..support import Engine
from .conftest import STACK, FixtureRepo

pytestmark = pytest.mark.engine


def _pulumi(engine: Engine, root: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [str(engine.pulumi), *args, "--non-interactive"],
        cwd=root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_stack_on_the_backend_pulumi_login_chose_is_operated_there_and_after_logout_not_silently_elsewhere(
    engine: Engine, repo: FixtureRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No variable anywhere, and the login in the run's own PULUMI_HOME (not the session's empty one).
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
    monkeypatch.delenv("PULUMI_CREDENTIALS_PATH", raising=False)
    env = {key: value for key, value in repo.env.items() if key != "PULUMI_BACKEND_URL"}
    _pulumi(engine, repo.root, env, "login", repo.backend.as_uri())
    (repo.root / DEFAULT_STATE_DIR).mkdir()  # an old local run's state beside it must not take its place
    options = StackOptions(work_dir=repo.root, env=env)

    result = up(STACK, options=options)

    assert result.version == 1 and [d.version for d in history(STACK, options=options)] == [1]
    # Pulumi's own choice, with nothing but the login to go by, holds that very update.
    updates = json.loads(_pulumi(engine, repo.root, env, "stack", "history", "--stack", STACK, "--json"))
    assert [(u["kind"], u["environment"]["git.head"]) for u in updates] == [("update", repo.head())]
    assert not any((repo.root / DEFAULT_STATE_DIR).iterdir())

    # Day 2: logged out, Pulumi has no backend; ours is the local default, and says why it is that one.
    _pulumi(engine, repo.root, env, "logout")
    with pytest.raises(StackNotFoundError) as missing:
        up(STACK, options=options)
    assert "nor a `pulumi login`" in str(missing.value)
    assert (repo.root / DEFAULT_STATE_DIR).as_uri() in str(missing.value)
