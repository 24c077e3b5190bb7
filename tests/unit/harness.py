"""Run a program under Pulumi mocks and record its whole resource graph.

``run(program)`` executes ``program`` through the library's ``run_mocked`` (the runner the offline plan
uses) and returns a ``Run`` with:

- ``graph``: every registered resource, components included (type, name, URN, parent URN,
  ``depends_on`` URNs, provider reference, inputs with secrets unwrapped, which inputs were secret, and
  options such as the replacement trigger);
- ``values``: the resolved value and secretness of each ``Output`` the program returned.

Unlike the offline plan's mocks, ``PlatformMocks`` invents the few computed outputs the components read
(a kubeconfig, key material) and answers the calls they make (the deploying identity, a kubeconfig with
a profile), so that tests can follow values through the graph.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pulumi

from gitops_infra.automation._engine.recording import Graph, Registered, run_mocked

__all__ = [
    "DEPLOYER_ARN",
    "MOCK_KUBECONFIG",
    "MOCK_PRIVATE_KEY_PREFIX",
    "PROJECT",
    "Graph",
    "PlatformMocks",
    "Registered",
    "Run",
    "run",
]

PROJECT = "gitops-infra"
MOCK_PRIVATE_KEY_PREFIX = "mock-openssh-private-key-"
DEPLOYER_ARN = "arn:aws:sts::123456789012:assumed-role/ci-deployer/gitops-infra-session"
"""Who the mocked AWS provider says is deploying: a CI role's session, in no test's admin list."""
T = TypeVar("T")


MOCK_KUBECONFIG = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "mock", "cluster": {"server": "https://mock"}}],
    }
)


def _issuer(arn: str) -> str:
    """What IAM's session context says an STS session ARN stands for: its role (or the ARN itself)."""
    prefix, _, rest = arn.partition(":sts:")
    account, _, session = rest.partition(":assumed-role/")
    if not session:
        return arn
    return f"{prefix}:iam:{account}:role/{session.split('/')[0]}"


class PlatformMocks(pulumi.runtime.Mocks):
    """Outputs echo the inputs, plus the computed outputs the components read and the calls they make."""

    def __init__(
        self,
        caller_arn: str = DEPLOYER_ARN,
        reads: Mapping[str, Mapping[str, Any]] | None = None,
        git_files: Mapping[str, str] | None = None,
        repositories: Mapping[str, str] | None = None,
    ) -> None:
        self.caller_arn = caller_arn
        self.reads = dict(reads or {})
        self.git_files = dict(git_files or {})
        self.repositories = dict(repositories or {})

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        if args.resource_id in self.reads:  # a `Resource.get`: the state of what exists, by its ID
            return args.resource_id, dict(self.reads[args.resource_id])
        state = dict(args.inputs)
        name = args.name
        if args.typ == "eks:index:Cluster":
            issuer = f"oidc.eks.eu-west-1.amazonaws.com/id/{name.upper()}"
            state |= {
                "kubeconfigJson": MOCK_KUBECONFIG,
                "kubeconfig": json.loads(MOCK_KUBECONFIG),
                "oidcProviderArn": f"arn:aws:iam::123456789012:oidc-provider/{issuer}",
                "oidcProviderUrl": issuer,
                "clusterSecurityGroupId": f"sg-{name}",
            }
        elif args.typ == "tls:index/privateKey:PrivateKey":
            algorithm = str(state.get("algorithm", "")).lower()
            state |= {
                "publicKeyOpenssh": f"ssh-{algorithm} AAAA-{name}",
                # A marker, not key material: tests follow it through the graph.
                "privateKeyOpenssh": f"{MOCK_PRIVATE_KEY_PREFIX}{name}",
                "privateKeyPem": f"{MOCK_PRIVATE_KEY_PREFIX}pem-{name}",
            }
        elif args.typ == "pulumi:index:Stash":  # the engine's own: it keeps the first value it was given
            state["output"] = state["input"]
        elif args.typ == "tls:index/selfSignedCert:SelfSignedCert":
            state["certPem"] = f"mock-cert-pem-{name}"  # public, unlike the key
        elif args.typ.startswith("aws:"):
            state.setdefault("arn", f"arn:aws:mock::123456789012:{name}")
            state.setdefault("name", name)
        resource_id = f"{name}-id" if args.custom else ""
        return resource_id, state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        if args.token == "aws:index/getCallerIdentity:getCallerIdentity":
            account = self.caller_arn.split(":")[4]
            return {"accountId": account, "arn": self.caller_arn, "userId": "AROAMOCK", "id": account}, []
        if args.token == "aws:iam/getSessionContext:getSessionContext":
            arn = str(args.args["arn"])
            return {"arn": arn, "issuerArn": _issuer(arn), "id": arn}, []
        if args.token == "eks:index:Cluster/getKubeconfig":
            kubeconfig = json.loads(MOCK_KUBECONFIG)
            # As pulumi-eks writes them: `aws eks get-token ... [--role-arn R] [--profile P]`.
            role = ["--role-arn", args.args["roleArn"]] if args.args.get("roleArn") else []
            profile = ["--profile", args.args["profileName"]] if args.args.get("profileName") else []
            kubeconfig["users"] = [{"name": "aws", "user": {"exec": {"args": [*role, *profile]}}}]
            return {"result": json.dumps(kubeconfig)}, []
        if args.token == "github:index/getRepository:getRepository":
            name = str(args.args["name"])
            if name not in self.repositories:
                return {"name": name, "id": ""}, []
            return {
                "name": name,
                "id": name,
                "nodeId": f"R_{name}",
                "description": self.repositories[name],
            }, []
        if args.token == "github:index/getRepositoryFile:getRepositoryFile":
            path = str(args.args["file"])
            found = {"repository": args.args["repository"], "file": path, "branch": args.args.get("branch")}
            if path not in self.git_files:  # as the provider answers a 404: an empty result
                return {**found, "id": ""}, []
            message = self.git_files[path]
            return {**found, "id": path, "sha": f"sha-{path}", "commitMessage": message, "content": "?"}, []
        raise AssertionError(f"unexpected call {args.token}: the components make no other")


@dataclass(frozen=True)
class Resolved:
    """An Output's value after the run, and whether it was secret."""

    value: Any
    secret: bool


@dataclass(frozen=True)
class Run(Generic[T]):
    result: T
    graph: Graph
    values: Mapping[str, Resolved]


def run(
    program: Callable[[], T],
    *,
    outputs: Callable[[T], Mapping[str, pulumi.Output[Any]]] | None = None,
    stack: str = "dev",
    config: Mapping[str, str] | None = None,
    secret_keys: list[str] | None = None,
    caller_arn: str = DEPLOYER_ARN,
    reads: Mapping[str, Mapping[str, Any]] | None = None,
    git_files: Mapping[str, str] | None = None,
    repositories: Mapping[str, str] | None = None,
) -> Run[T]:
    """Run ``program`` under mocks (the library's own runner); resolve the Outputs ``outputs(result)`` names.

    ``reads`` is the state each ``Resource.get`` finds, by the ID it reads; ``git_files`` are the files
    the fleet repository holds, each with the message of the last commit that changed it; and
    ``repositories`` the repositories GitHub holds, each with its description.
    """
    box: dict[str, Any] = {}
    resolved: dict[str, Resolved] = {}

    async def resolve(named: Mapping[str, pulumi.Output[Any]]) -> None:
        for key, output in named.items():
            resolved[key] = Resolved(value=await output.future(), secret=await output.is_secret())

    def execute() -> Any:
        box["result"] = program()
        if outputs is None:
            return None
        return pulumi.Output.from_input(resolve(outputs(box["result"])))

    graph = run_mocked(
        execute,
        PlatformMocks(caller_arn, reads, git_files, repositories),
        project=PROJECT,
        stack=stack,
        preview=False,
        config=config,
        secret_keys=secret_keys or [],
    )
    return Run(result=box["result"], graph=graph, values=resolved)
