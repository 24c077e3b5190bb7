"""The real ``DeployKey`` component, with GitHub and TLS stood in for by dynamic providers.

Neither provider plugin can run here, so ``pulumi_tls.PrivateKey`` and ``pulumi_github.
RepositoryDeployKey`` are replaced, before the component is imported, by dynamic resources that keep their
upstream contracts: every input of each is replace-only (ForceNew), a key pair makes a new public key
each time it is created, and the stand-in GitHub refuses a key that a deploy key already registered, as
GitHub does ("key is already in use", terraform-provider-github #1316). Its registrations are kept in the
JSON file ``registry`` names, and every create and delete is logged, in order, to ``log``.

The engine decides what is replaced and in which order, as it would with the real providers.
"""

import json
import pathlib
import secrets
import sys
import types

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider

config = pulumi.Config()


def _log(path: str, line: str) -> None:
    with pathlib.Path(path).open("a") as out:
        out.write(line + "\n")


def _replaces(olds: dict, news: dict, keys: tuple[str, ...]) -> DiffResult:
    changed = [key for key in keys if olds.get(key) != news.get(key)]
    return DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)


class _KeyPairProvider(ResourceProvider):
    def create(self, props: dict) -> CreateResult:
        public = f"ecdsa-sha2-nistp384 {secrets.token_hex(12)}"
        _log(props["log"], f"create key {public[-6:]}")
        outs = {**props, "public_key_openssh": public, "private_key_openssh": f"private of {public}"}
        return CreateResult(id_=public[-6:], outs=outs)

    def diff(self, _id: str, olds: dict, news: dict) -> DiffResult:
        return _replaces(olds, news, ("algorithm", "ecdsa_curve"))

    def delete(self, _id: str, props: dict) -> None:
        _log(props["log"], f"delete key {props['public_key_openssh'][-6:]}")


class _GitHubDeployKeyProvider(ResourceProvider):
    def _read(self, registry: str) -> dict:
        path = pathlib.Path(registry)
        return json.loads(path.read_text()) if path.exists() else {}

    def create(self, props: dict) -> CreateResult:
        registered = self._read(props["registry"])
        if any(entry["key"] == props["key"] for entry in registered.values()):
            raise RuntimeError("POST .../keys: 422 Validation Failed: key is already in use")
        key_id = str(len(registered) + 1 + max((int(k) for k in registered), default=0))
        registered[key_id] = {field: props[field] for field in ("repository", "title", "key", "read_only")}
        pathlib.Path(props["registry"]).write_text(json.dumps(registered))
        _log(props["log"], f"register {props['key'][-6:]} on {props['repository']}")
        return CreateResult(id_=key_id, outs=props)

    def diff(self, _id: str, olds: dict, news: dict) -> DiffResult:
        return _replaces(olds, news, ("repository", "title", "key", "read_only"))

    def delete(self, id_: str, props: dict) -> None:
        registered = self._read(props["registry"])
        registered.pop(id_, None)
        pathlib.Path(props["registry"]).write_text(json.dumps(registered))
        _log(props["log"], f"unregister {props['key'][-6:]} from {props['repository']}")


class PrivateKey(Resource):
    public_key_openssh: pulumi.Output[str]
    private_key_openssh: pulumi.Output[str]

    def __init__(self, name, algorithm, ecdsa_curve=None, opts=None):
        props = {
            "algorithm": algorithm,
            "ecdsa_curve": ecdsa_curve,
            "log": config.require("log"),
            "public_key_openssh": None,
            "private_key_openssh": None,
        }
        secret = pulumi.ResourceOptions(additional_secret_outputs=["private_key_openssh"])
        super().__init__(_KeyPairProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))


class RepositoryDeployKey(Resource):
    read_only: pulumi.Output[bool]

    def __init__(self, name, repository, title, key, read_only, opts=None):
        props = {
            "repository": repository,
            "title": title,
            "key": key,
            "read_only": read_only,
            "registry": config.require("registry"),
            "log": config.require("log"),
        }
        super().__init__(_GitHubDeployKeyProvider(), name, props, opts)


sys.modules["pulumi_tls"] = types.SimpleNamespace(PrivateKey=PrivateKey)
sys.modules["pulumi_github"] = types.SimpleNamespace(RepositoryDeployKey=RepositoryDeployKey)

from gitops_infra.components.deploy_key import DeployKey, DeployKeyArgs  # noqa: E402

key = DeployKey(
    "fleet",
    DeployKeyArgs(
        repository=config.require("repository"),
        read_only=config.require_bool("readOnly"),
        title=config.get("title"),
        rotation=config.get("rotation") or "",
    ),
)
pulumi.export("publicKey", key.public_key)
pulumi.export("readOnly", key.read_only)
