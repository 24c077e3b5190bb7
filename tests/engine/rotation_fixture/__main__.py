"""A stand-in for the platform's rotation, for the real engine: a key replaced create-before-delete (the
deploy key), the Secret that takes it in place, and the GitRepository whose update waits for Flux to
fetch with it (and fails when Flux refuses). Dynamic providers that log what they do, in order.
"""

import pathlib
import time

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

config = pulumi.Config()
LOG = pathlib.Path(config.require("log"))


def log(*words: str) -> None:
    with LOG.open("a") as out:
        out.write(" ".join(words) + "\n")


class Key(ResourceProvider):
    def create(self, props: dict) -> CreateResult:
        log("create key", props["rotation"])
        return CreateResult(id_=f"key-{props['rotation']}", outs=props)

    def diff(self, _id: str, olds: dict, news: dict) -> DiffResult:
        changed = olds["rotation"] != news["rotation"]
        replaces = ["rotation"] if changed else []
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    def delete(self, _id: str, props: dict) -> None:
        log("delete key", props["rotation"])


class Secret(ResourceProvider):
    def create(self, props: dict) -> CreateResult:
        log("write secret", props["key"])
        return CreateResult(id_="secret", outs=props)

    def diff(self, _id: str, olds: dict, news: dict) -> DiffResult:
        return DiffResult(changes=olds["key"] != news["key"])

    def update(self, _id: str, _olds: dict, news: dict) -> UpdateResult:
        log("write secret", news["key"])
        return UpdateResult(outs=news)

    def delete(self, _id: str, props: dict) -> None:
        log("delete secret")


class Gate(ResourceProvider):
    def _fetch(self, props: dict) -> None:
        log("wait for fetch with", props["request"])
        time.sleep(1)
        if props["request"] == props["refused"]:
            raise RuntimeError(f"Flux refused {props['request']}")
        log("fetched with", props["request"])

    def create(self, props: dict) -> CreateResult:
        self._fetch(props)
        return CreateResult(id_="repository", outs=props)

    def diff(self, _id: str, olds: dict, news: dict) -> DiffResult:
        return DiffResult(changes=olds != news)

    def update(self, _id: str, _olds: dict, news: dict) -> UpdateResult:
        self._fetch(news)
        return UpdateResult(outs=news)

    def delete(self, _id: str, props: dict) -> None:
        log("delete repository")


class DeployKey(Resource):
    def __init__(self, name: str, rotation: str) -> None:
        super().__init__(Key(), name, {"rotation": rotation})


class GitAuth(Resource):
    def __init__(self, name: str, key: pulumi.Input[str]) -> None:
        super().__init__(Secret(), name, {"key": key})


class GitRepository(Resource):
    def __init__(self, name: str, request: pulumi.Input[str], after: pulumi.Resource) -> None:
        props = {"request": request, "refused": config.get("refused") or ""}
        super().__init__(Gate(), name, props, pulumi.ResourceOptions(depends_on=[after]))


key = DeployKey("key", config.require("rotation"))
secret = GitAuth("secret", key.id)
GitRepository("repository", key.id, secret)
