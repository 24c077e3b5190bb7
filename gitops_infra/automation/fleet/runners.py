"""Handing fleet work to the engines teams already run: a CI matrix, or a Kubernetes Indexed Job.

We build no scheduler. :func:`fleet_matrix` splits the fleet into the jobs of a GitHub Actions or GitLab
matrix: one job a stack while they fit, so each has its own role and concurrency group, else shards of
many stacks each. :func:`indexed_job` writes a ``batch/v1`` Job whose pod ``I`` checks shard ``I``.
``fleet report`` (:mod:`~gitops_infra.automation.fleet.reports`) merges what the jobs print into one report.

No Pulumi import: a matrix of 500 stacks is computed from their files alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import ArgumentError
from .._state.git import changed_files, repo_root
from .._state.project import Project
from .inventory import STACK_FILE, FleetStack, Shard, shard_index
from .results import Matrix, MatrixEntry, Operation

__all__ = [
    "GITHUB_MAX_JOBS",
    "GITLAB_MAX_JOBS",
    "Operation",  # what the jobs run: defined with the matrix, and a runner's argument
    "changed_since",
    "fleet_matrix",
    "indexed_job",
    "selection_args",
]

GITHUB_MAX_JOBS = 256
"""GitHub Actions runs at most 256 jobs from one matrix."""
GITLAB_MAX_JOBS = 200
"""GitLab runs at most 200 jobs from one ``parallel:matrix``."""


def _one(values: Iterable[Any]) -> Any:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def fleet_matrix(stacks: Sequence[FleetStack], op: Operation, *, max_jobs: int = GITHUB_MAX_JOBS) -> Matrix:
    """The jobs for ``op`` over ``stacks``: one a stack while they fit in ``max_jobs``, else ``max_jobs``
    shards (``drift`` and ``preview`` only).

    ``up`` is one stack a job, of one wave: a matrix starts its jobs at once (``max-parallel`` bounds
    how many, not their order), so a matrix over two waves would deploy the later beside the earlier.
    Stacks of several waves are an ``ArgumentError`` naming them: a workflow runs one matrix a wave,
    each job of a wave's matrix needing the one before (``--wave 0``, then ``--wave 1``...). More stacks
    than jobs is an ``ArgumentError`` too.
    """
    if max_jobs < 1:
        raise ArgumentError(f"max_jobs must be at least 1, not {max_jobs}")
    if op is Operation.UP:
        waves = sorted({s.wave for s in stacks})
        if len(waves) > 1:
            shown = ", ".join(str(w) for w in waves[:-1]) + f" and {waves[-1]}"
            raise ArgumentError(
                f"the stacks to up are of waves {shown}, but a matrix runs its jobs at once, so wave "
                f"{waves[-1]} would deploy beside wave {waves[0]}: make one matrix a wave, each after the "
                f"one before (--wave {waves[0]} first, then --wave {waves[1]})"
            )
    ordered = sorted(stacks, key=lambda s: s.name) if op is Operation.UP else list(stacks)
    if len(ordered) <= max_jobs:
        entries = tuple(
            MatrixEntry(
                stack=s.stack, name=s.name, project=s.project_dir.as_posix(), wave=s.wave, role=s.role
            )
            for s in ordered
        )
        return Matrix(op=op, entries=entries, stacks=len(ordered))
    if op is Operation.UP:
        raise ArgumentError(
            f"{len(ordered)} stacks to up, but at most {max_jobs} jobs: up runs one job a stack, each with "
            "its own role and concurrency group; choose fewer stacks (--wave, --selector) per matrix"
        )
    held: list[list[FleetStack]] = [[] for _ in range(max_jobs)]
    for stack in ordered:  # one hash a stack, not one a stack and shard
        held[shard_index(stack.name, max_jobs)].append(stack)
    sharded = [
        MatrixEntry(
            shard=f"{index}/{max_jobs}", wave=_one(s.wave for s in shard), role=_one(s.role for s in shard)
        )
        for index, shard in enumerate(held)
    ]
    return Matrix(op=op, entries=tuple(sharded), stacks=len(ordered))


def changed_since(stacks: Sequence[FleetStack], ref: str) -> tuple[FleetStack, ...]:
    """The stacks whose stack file changed since ``ref`` (``git diff --name-only``), and every stack of a
    project whose program changed: any other file under its directory, ``Pulumi.yaml`` included.

    A stack's file is the one the engine reads (:meth:`Project.stack_files`: in ``stackConfigDir``, with
    the project file's extension), wherever that directory is. Another stack's file, and a settings file
    the engine reads for no stack (``Pulumi.dev.yaml`` beside a ``Pulumi.yml``, or beside a
    ``stackConfigDir``; Pulumi Deployments' ``Pulumi.dev.deploy.yaml``), changes no stack's program.

    A ref that is not in the clone is a ``CommitNotFoundError`` (a shallow clone says so): silently
    selecting nothing would report a clean fleet that was never checked.
    """
    changes: dict[Path, tuple[Path, ...]] = {}
    projects: dict[Path, tuple[dict[str, Path], set[Path]]] = {}
    kept = []
    for stack in stacks:
        directory = stack.project_dir.resolve()
        if directory not in projects:
            project = Project.load(directory)
            projects[directory] = (project.stack_files(), {directory, project.stack_config_dir})
        files, settings_dirs = projects[directory]
        own = files.get(stack.stack)
        repo = repo_root(directory)
        if repo not in changes:
            changes[repo] = changed_files(repo, ref)
        for path in changes[repo]:
            if path == own:
                kept.append(stack)
                break
            if path.parent in settings_dirs and STACK_FILE.match(path.name):
                continue  # another stack's settings, or settings the engine does not read
            if directory in path.parents:  # the program
                kept.append(stack)
                break
    return tuple(kept)


_K8S_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$")


def indexed_job(
    *,
    op: Operation,
    shards: int,
    image: str,
    name: str = "gitops-infra-drift",
    parallelism: int | None = None,
    namespace: str = "gitops-infra",
    service_account: str | None = None,
    secret: str = "gitops-infra-fleet",
    workdir: str = "/workspace",
    selection: Sequence[str] = (),
) -> dict[str, Any]:
    """A ``batch/v1`` Job, ``completionMode: Indexed``: pod ``I`` runs ``<op> --all --shard auto/N --json``.

    The project is baked into ``image`` at ``workdir`` with the engine (docs/fleet.md): a pod needs no
    git credentials, and the image's digest pins what ran. Everything secret (the passphrase, the backend,
    cloud credentials) comes from the Secret ``secret`` as environment variables, never inline. Exit 2
    (drift found) fails that index without a retry (``FailIndex``); any other failure is retried once.
    """
    if op is Operation.UP:
        raise ArgumentError("a Job runs drift or preview: up goes wave by wave, one stack a job")
    for what, value in (("name", name), ("namespace", namespace), ("secret", secret)):
        if not _K8S_NAME.fullmatch(value):
            raise ArgumentError(f"{what} {value[:80]!r}: must be a DNS label (lowercase, digits, '-')")
    if service_account is not None and not _K8S_NAME.fullmatch(service_account):
        raise ArgumentError(f"service account {service_account[:80]!r}: must be a DNS label")
    if not image or any(c.isspace() for c in image):
        raise ArgumentError("image: must be an image reference, such as registry.example.com/fleet@sha256:…")
    Shard(0, shards)  # the count's own check
    parallelism = shards if parallelism is None else parallelism
    if parallelism < 1:
        raise ArgumentError(f"parallelism must be at least 1, not {parallelism}")
    command = ["gitops-infra", op.value, "--all", "--shard", f"auto/{shards}", *selection, "--json"]
    labels = {"app.kubernetes.io/name": "gitops-infra", "app.kubernetes.io/component": f"fleet-{op.value}"}
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": service_account is not None,
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "gitops-infra",
                "image": image,
                "workingDir": workdir,
                "command": command,
                "envFrom": [{"secretRef": {"name": secret}}],
                # Not a read-only root: the engine writes under its PULUMI_HOME, which holds the image's
                # plugins. Scratch files go to /tmp, a volume of the pod's own.
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
            }
        ],
        "volumes": [{"name": "tmp", "emptyDir": {}}],
    }
    if service_account is not None:
        pod["serviceAccountName"] = service_account
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "completionMode": "Indexed",
            "completions": shards,
            "parallelism": parallelism,
            "backoffLimitPerIndex": 1,
            "podFailurePolicy": {
                "rules": [
                    # Drift found is a result, not a failure to retry.
                    {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [2]}},
                ]
            },
            "ttlSecondsAfterFinished": 86400,
            "template": {"metadata": {"labels": labels}, "spec": pod},
        },
    }


def selection_args(projects: Sequence[Path], selector: Mapping[str, str], wave: int | None) -> list[str]:
    """The command-line words that make the same selection again (for a Job's pods)."""
    words: list[str] = []
    for project in projects:
        words += ["--project", project.as_posix()]
    if selector:
        words += ["--selector", ",".join(f"{k}={v}" for k, v in selector.items())]
    if wave is not None:
        words += ["--wave", str(wave)]
    return words
