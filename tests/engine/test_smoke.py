"""Smoke test: the built engine runs a Python program with a dynamic-provider resource end to end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pulumi import automation as auto

from ..support import Engine, write_project

pytestmark = pytest.mark.engine

PROGRAM = '''
import os
from pathlib import Path

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult


class FileProvider(ResourceProvider):
    """Manages one text file; the engine talks to it through the pulumi-python dynamic provider."""

    def create(self, props):
        Path(props["path"]).write_text(props["content"])
        return CreateResult(id_=props["path"], outs=dict(props))

    def diff(self, _id, olds, news):
        changed = [k for k in ("path", "content") if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=["path"] if "path" in changed else [])

    def update(self, _id, _olds, news):
        Path(news["path"]).write_text(news["content"])
        return UpdateResult(outs=dict(news))

    def delete(self, _id, props):
        Path(props["path"]).unlink(missing_ok=True)


class File(Resource):
    def __init__(self, name, path, content, opts=None):
        super().__init__(FileProvider(), name, {"path": path, "content": content}, opts)


target = pulumi.Config().require("target")
f = File("greeting", path=os.path.join(target, "greeting.txt"), content="hello from the engine")
pulumi.export("path", f.id)
'''


def _project(tmp_path: Path) -> Path:
    # `virtualenv` points the language host at the interpreter running the tests, which has pulumi.
    work_dir = write_project(tmp_path / "project", "smoke", virtualenv=sys.prefix)
    (work_dir / "__main__.py").write_text(PROGRAM)
    return work_dir


def test_up_noop_destroy(engine: Engine, engine_env: dict[str, str], tmp_path: Path) -> None:
    print(f"engine: {engine.bin_dir / 'pulumi'} {engine.version}")
    target = tmp_path / "files"
    target.mkdir()
    workspace = auto.LocalWorkspace(
        work_dir=str(_project(tmp_path)), pulumi_command=engine.command, env_vars=engine_env
    )
    stack = auto.Stack.create("dev", workspace)
    stack.set_config("target", auto.ConfigValue(str(target)))

    first = stack.up()
    assert first.summary.result == "succeeded"
    assert first.summary.resource_changes == {"create": 2}  # the stack and the file
    created = Path(first.outputs["path"].value)
    assert created.read_text() == "hello from the engine"

    second = stack.up()
    assert second.summary.resource_changes == {"same": 2}

    gone = stack.destroy()
    assert gone.summary.result == "succeeded"
    assert gone.summary.resource_changes == {"delete": 2}
    assert not created.exists()
