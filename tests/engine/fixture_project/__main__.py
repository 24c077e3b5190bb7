"""Fixture program for the engine tests: text files managed by a Python dynamic provider.

Dynamic-provider resources need no plugin binary, so the real engine can create, read (refresh), update
and delete them offline. Config (namespace ``fixture``):

- ``directory``: where the files live;
- ``files``: a map of file name to content, one resource per entry;
- ``token`` (secret, optional): exported as a secret output;
- ``secretFile`` (secret, optional): the content of one more file, ``secret``, so that a secret value
  flows into a resource's inputs and outputs (and the state);
- ``protected`` (optional): names of ``files`` made with ``protect``, which a destroy keeps;
- ``fail`` (optional): when set, the program raises with this message;
- ``delay`` (optional): seconds the program sleeps first, to hold the stack's lock in concurrency tests.

``FIXTURE_SLOW_CREATE`` in the environment makes each create take that many seconds, so that an update
can be interrupted while resource operations are in flight; ``FIXTURE_SLOW_READ`` does the same for each
read (a refresh, a drift check). ``FIXTURE_HOLD`` names a file: each create then waits, after its
``FIXTURE_SLOW_CREATE``, until that file exists (two minutes at most), so that a test holds an update
mid-run for as long as it needs, however slow a loaded machine is. ``FIXTURE_TEMP_LOG`` names a file:
each create then also leaves a file in its temp directory, as the Kubernetes provider leaves its
kubeconfig, and appends that file's path there.
"""

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pulumi
from pulumi.dynamic import (
    CreateResult,
    DiffResult,
    ReadResult,
    Resource,
    ResourceProvider,
    UpdateResult,
)


class FileProvider(ResourceProvider):
    """One text file; ``read`` reports what is on disk so that refresh sees out-of-band changes."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        if log := os.environ.get("FIXTURE_TEMP_LOG"):
            descriptor, left = tempfile.mkstemp(prefix="left-by-create-")
            os.close(descriptor)
            with open(log, "a") as file:
                file.write(left + "\n")
        time.sleep(float(os.environ.get("FIXTURE_SLOW_CREATE") or 0))
        if hold := os.environ.get("FIXTURE_HOLD"):
            deadline = time.monotonic() + 120
            while not Path(hold).exists() and time.monotonic() < deadline:
                time.sleep(0.1)
        Path(props["path"]).write_text(props["content"])
        return CreateResult(id_=props["path"], outs=dict(props))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        time.sleep(float(os.environ.get("FIXTURE_SLOW_READ") or 0))
        path = Path(id_)
        if not path.exists():
            return ReadResult(id_=None, outs={})
        return ReadResult(id_=id_, outs={**props, "path": id_, "content": path.read_text()})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in ("path", "content") if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=[k for k in changed if k == "path"])

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        Path(news["path"]).write_text(news["content"])
        return UpdateResult(outs=dict(news))

    def delete(self, id_: str, _props: dict[str, Any]) -> None:
        Path(id_).unlink(missing_ok=True)


class File(Resource):
    path: pulumi.Output[str]
    content: pulumi.Output[str]

    def __init__(
        self, name: str, path: str, content: pulumi.Input[str], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(FileProvider(), name, {"path": path, "content": content}, opts)


config = pulumi.Config("fixture")
time.sleep(float(config.get("delay") or 0))
if failure := config.get("fail"):
    raise RuntimeError(failure)

directory = Path(config.require("directory"))
protected = set(config.get_object("protected") or ())
files = {
    name: File(name, str(directory / name), content, pulumi.ResourceOptions(protect=name in protected))
    for name, content in config.require_object("files").items()
}

if config.get("secretFile") is not None:
    File("secret", str(directory / "secret"), config.require_secret("secretFile"))

pulumi.export("files", {name: f.content for name, f in files.items()})
if config.get("token") is not None:
    pulumi.export("token", config.require_secret("token"))
