"""On the local cluster: commit-to-applied latency, Flux polling at the stack's interval against Flux's
webhook Receiver, side by side.

One local cluster (Flux 2.9.4's controllers as processes) and one SSH fleet server, as the cluster tests
start them, and two copies of the local stack (this repository's stack program on ``Pulumi.local.yaml``),
each with namespaces and a fleet path of its own and the same ``gitInterval`` (:data:`INTERVAL`):

- ``poll``: no Receiver, so a commit is fetched at source-controller's next poll;
- ``hook``: ``flux.receiver`` on (``webhook: false``: GitHub cannot reach loopback), and the bench plays
  GitHub, delivering the signed ``push`` event to the Receiver as soon as the commit is pushed.

Each round is one commit that changes a ConfigMap's value under both paths. Its latency, per stack, is
from the push's return to the moment the new value is read back from the API server (polled every
:data:`READ_EVERY` seconds): the fetch, kustomize-controller's apply on the new artifact, and the read.
GitHub's own delivery delay (its queue, the internet) is not in it. Before each commit the bench waits a
random part of the interval (seeded), so that commits fall at every phase of the poll, as pushes do.
"""

from __future__ import annotations

import base64
import random
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client
from pulumi import automation as auto

from gitops_infra import checks
from gitops_infra.automation import StackOptions, up
from gitops_infra.components.flux import FLUX_SYNC_NAME, RECEIVER_SECRET_NAME, RECEIVER_TOKEN_KEY
from gitops_infra.local import FleetServer, LocalCluster
from gitops_infra.local._github_webhook import deliver_github_event
from gitops_infra.local._project import set_secrets
from tests.support import REPO_ROOT, TOOLCHAIN, engine_env, init_repo, stack_project, workspace

from .fixture import require_engine
from .local_fleet import LocalFleet, local_fleet

STACK = "local"
INTERVAL = "30s"
"""The stacks' ``flux.gitInterval`` for the run: short, so that polling's rounds take minutes, not hours."""
COMMITS = 12
READ_EVERY = 0.1
APPLIED_WITHIN = 180.0
"""Seconds a round may take before the bench gives up on it (polling's worst is one interval and an
apply)."""
RECEIVER_TARGET_MEDIAN_S = 5.0
"""The Receiver's median commit-to-applied latency to aim for (issue 49); polling's is half an interval."""
SEED = 49


@dataclass(frozen=True)
class _Stack:
    name: str
    options: StackOptions
    service_namespace: str
    flux_namespace: str
    fleet_path: str


def _seconds(duration: str) -> float:
    return checks.parse_duration(duration).total_seconds()


def _new_stack(local: LocalFleet, name: str, engine: Path, receiver: bool) -> _Stack:
    """A copy of the local stack named ``name``, as the cluster tests make theirs, configured and ``up``."""
    tmp, cluster, fleet, key = local.tmp, local.cluster, local.fleet, local.key
    root = stack_project(init_repo(tmp / f"project-{name}", "bench"), virtualenv=sys.prefix)
    shutil.copy(REPO_ROOT / "Pulumi.local.yaml", root / "Pulumi.local.yaml")
    (tmp / f"engine-{name}").mkdir()
    env = engine_env(tmp / f"engine-{name}", path=[TOOLCHAIN.bin_dir, engine])
    auto.Stack.create(STACK, workspace(root, env))
    options = StackOptions(work_dir=root, env=env)
    stack = _Stack(name, options, f"apps-{name}", f"flux-{name}", f"clusters/{name}")
    settings: dict[str, Any] = {
        "git.url": fleet.url,
        "git.knownHosts": fleet.known_hosts,
        "git.path": stack.fleet_path,
        "environment.serviceNamespace": stack.service_namespace,
        "flux.namespace": stack.flux_namespace,
        "flux.gitInterval": INTERVAL,
    }
    if receiver:
        settings["flux.receiver.webhook"] = "false"
    workspace(root, env).set_all_config(
        STACK, {f"gitops-infra:{k}": auto.ConfigValue(str(v)) for k, v in settings.items()}, path=True
    )
    set_secrets(
        root,
        STACK,
        {"gitops-infra:localKubeconfig": cluster.kubeconfig, "gitops-infra:localDeployKey": key.private_key},
        env=env,
        engine=engine / "pulumi",
    )
    fleet.commit({f"{stack.fleet_path}/README.md": f"The bench's {name} path.\n"}, f"the path of {name}")
    up(STACK, options=stack.options)
    return stack


@contextmanager
def _stacks() -> Iterator[tuple[LocalCluster, FleetServer, _Stack, _Stack]]:
    engine = require_engine()
    with local_fleet("bench-receiver-") as local:
        made: list[_Stack] = []
        try:
            local.fleet.commit({"README.md": "The bench's fleet.\n"}, "an empty fleet")
            for name, receiver in (("poll", False), ("hook", True)):
                made.append(_new_stack(local, name, engine, receiver))
            yield local.cluster, local.fleet, made[0], made[1]
        finally:
            for stack in made:
                assert stack.options.work_dir is not None
                auto.Stack.select(STACK, workspace(stack.options.work_dir, stack.options.env)).destroy(
                    on_output=None
                )


def _config_map(stack: _Stack, value: int) -> str:
    return (
        "apiVersion: v1\nkind: ConfigMap\n"
        f"metadata: {{name: bench-latency, namespace: {stack.service_namespace}}}\n"
        f'data: {{round: "{value}"}}\n'
    )


def _applied(core: Any, stack: _Stack) -> str | None:
    try:
        found = core.read_namespaced_config_map("bench-latency", stack.service_namespace)
    except client.exceptions.ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return (found.data or {}).get("round")


def _receiver_url(cluster: LocalCluster, custom: Any, core: Any, stack: _Stack) -> tuple[str, str]:
    """The hook stack's Receiver URL (once Ready) and its token, read from the cluster."""
    deadline = time.monotonic() + APPLIED_WITHIN
    while time.monotonic() < deadline:
        status = custom.get_namespaced_custom_object(
            "notification.toolkit.fluxcd.io", "v1", stack.flux_namespace, "receivers", FLUX_SYNC_NAME
        ).get("status", {})
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions", []))
        if ready and status.get("webhookPath"):
            secret = core.read_namespaced_secret(RECEIVER_SECRET_NAME, stack.flux_namespace)
            token = base64.b64decode(secret.data[RECEIVER_TOKEN_KEY]).decode()
            return cluster.receiver_url + status["webhookPath"], token
        time.sleep(0.5)
    raise SystemExit("the hook stack's Receiver never became Ready")


def _percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile by linear interpolation between the closest ranks (numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * share
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _summary(latencies: list[float]) -> dict[str, Any]:
    return {
        "latencies_s": latencies,
        "median_s": statistics.median(latencies),
        "p95_s": _percentile(latencies, 0.95),
        "min_s": min(latencies),
        "max_s": max(latencies),
    }


def run(commits: int = COMMITS) -> dict[str, Any]:
    print(
        f"[receiver] commit-to-applied latency, polling every {INTERVAL} against the Receiver, "
        f"{commits} commits",
        file=sys.stderr,
    )
    interval = _seconds(INTERVAL)
    rounds = random.Random(SEED)
    polled: list[float] = []
    hooked: list[float] = []
    with _stacks() as (cluster, fleet, poll, hook):
        api = cluster.api()
        core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        url, token = _receiver_url(cluster, custom, core, hook)
        for index in range(1, commits + 1):
            time.sleep(rounds.uniform(0, interval))  # a commit at any phase of the poll
            files = {f"{s.fleet_path}/bench-latency.yaml": _config_map(s, index) for s in (poll, hook)}
            files |= {
                f"{s.fleet_path}/kustomization.yaml": (
                    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                    "resources: [bench-latency.yaml]\n"
                )
                for s in (poll, hook)
            }
            sha = fleet.commit(files, f"bench round {index}")
            pushed = time.monotonic()
            status = deliver_github_event(url, token, "push", {"ref": "refs/heads/main", "after": sha})
            if status != 200:
                raise SystemExit(f"the Receiver refused the push with HTTP {status}")
            seen: dict[str, float] = {}
            while len(seen) < 2:
                now = time.monotonic()
                if now - pushed > APPLIED_WITHIN:
                    raise SystemExit(f"round {index} was not applied within {APPLIED_WITHIN:.0f} s")
                for stack in (poll, hook):
                    if stack.name not in seen and _applied(core, stack) == str(index):
                        seen[stack.name] = now - pushed
                time.sleep(READ_EVERY)
            polled.append(seen["poll"])
            hooked.append(seen["hook"])
            print(
                f"[receiver] round {index}: polling {seen['poll']:.2f} s, Receiver {seen['hook']:.2f} s",
                file=sys.stderr,
            )
    hook_summary = _summary(hooked)
    return {
        "interval": INTERVAL,
        "commits": commits,
        "polling": _summary(polled),
        "receiver": hook_summary,
        "receiver_target_median_s": RECEIVER_TARGET_MEDIAN_S,
        "polling_expected_median_s": interval / 2,
        "speedup_of_medians": statistics.median(polled) / hook_summary["median_s"],
    }
