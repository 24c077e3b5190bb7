"""The fleet inventory: every stack of one or more projects, and how the fleet is split into shards.

The inventory lives in the stack files, so nothing is written twice. ``Pulumi.<stack>.yaml`` may hold an
optional ``gitops-infra:fleet`` section::

    config:
      gitops-infra:fleet:
        wave: 2                 # the order of a rollout: dev 0, staging 1, prod 2 (default 0)
        labels: {region: eu-west-1, tier: prod, team: payments}
        role: arn:aws:iam::123456789012:role/fleet-drift   # what a CI runner assumes for this stack

A stack file without it is wave 0 with no labels. Each stack is known by its fully qualified name,
``<org>/<project>/<stack>`` (``organization`` on a file backend, as Pulumi itself writes it).

A shard ``I/N`` holds the stacks whose name hashes to ``I`` modulo ``N`` (SHA-256, so every runner on every
machine and Python computes the same split without talking to the others): the N shards together hold
every selected stack exactly once. ``I`` counts from 0, as Kubernetes' ``JOB_COMPLETION_INDEX`` and
GitHub's ``strategy.job-index`` do.

No Pulumi import here: listing 500 stacks reads files and never starts the engine.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from ... import checks
from ..._validation import validation_problems
from ...errors import ArgumentError, ConfigError, StackNameError, WorkspaceError
from .._state.project import DEPLOYMENT_SUFFIX, STACK_KEYS, Project, find_project_dir
from .._state.stack_files import PROJECT_FILE, SETTINGS_EXTENSIONS, find_settings, read_mapping
from ..stack_name import parse_stack_name

__all__ = [
    "FLEET_KEY",
    "FLEET_ORG",
    "FLEET_SECTION",
    "JOB_INDEX_VAR",
    "MAX_SHARDS",
    "NAMESPACE",
    "STACK_FILE",
    "FleetSpec",
    "FleetStack",
    "Shard",
    "fleet_spec",
    "fleet_stacks",
    "parse_selector",
    "project_here",
    "qualified_name",
    "shard_index",
]

NAMESPACE = "gitops-infra"
"""Our config namespace: the fleet section is ``gitops-infra:fleet`` in any project's stack files."""
FLEET_SECTION = checks.FLEET_SECTION
FLEET_KEY = f"{NAMESPACE}:{FLEET_SECTION}"
FLEET_ORG = "organization"
"""The org in a fully qualified name on a file backend, which has no orgs (Pulumi writes the same)."""
MAX_SHARDS = 10_000
"""More shards than any CI engine runs jobs of one matrix or Job: a larger N is a typo."""
JOB_INDEX_VAR = "JOB_COMPLETION_INDEX"
"""Where ``--shard auto/N`` reads ``I``: Kubernetes sets it in every pod of an Indexed Job."""

STACK_FILE = re.compile(
    r"^Pulumi\.(?P<stack>.+)(?:" + "|".join(re.escape(e) for e in SETTINGS_EXTENSIONS) + ")$"
)
"""A stack's settings file, ``Pulumi.<stack>.yaml`` (or ``.yml``, ``.json``), by its file name."""


def _labels(value: dict[str, str]) -> dict[str, str]:
    for key, label in value.items():
        problem = checks.label_problem(key, label)
        if problem is not None:
            raise ValueError(f"{key!r}: {problem}" if len(key) <= 80 else problem)
    return value


def _role(value: str | None) -> str | None:
    problem = checks.iam_role_problem(value) if value is not None else None
    if problem is not None:
        raise ValueError(problem)
    return value


class FleetSpec(BaseModel):
    """A stack's place in the fleet: the ``gitops-infra:fleet`` section of its stack file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    wave: Annotated[StrictInt, Field(ge=0, le=1000)] = 0
    """The order of a rollout: every stack of wave 0 before any of wave 1."""
    labels: Annotated[dict[StrictStr, StrictStr], AfterValidator(_labels)] = Field(default_factory=dict)
    """Kubernetes-style labels (region, tier, team) that ``--selector`` matches."""
    role: Annotated[StrictStr | None, AfterValidator(_role)] = None
    """The IAM role a CI runner assumes (by OIDC) to operate this stack."""


def fleet_spec(value: Any) -> tuple[FleetSpec, list[str]]:
    """The section's value checked: the spec (the default one when invalid), and each problem by key path."""
    if value is None:
        return FleetSpec(), []
    if isinstance(value, Mapping) and "secure" in value:
        return FleetSpec(), [f"{FLEET_KEY}: must be plain YAML, not a secret (runners read it unencrypted)"]
    if not isinstance(value, Mapping):
        return FleetSpec(), [f"{FLEET_KEY}: must be a mapping with wave, labels and role"]
    try:
        return FleetSpec.model_validate(value), []
    except ValidationError as exc:
        return FleetSpec(), validation_problems(exc, FLEET_KEY)  # label keys as written, not camelCased


@dataclass(frozen=True)
class FleetStack:
    """One stack of the fleet: where its project is, and its fleet fields."""

    project: str
    """The project's name (``name:`` in its ``Pulumi.yaml``)."""
    stack: str
    project_dir: Path
    """The project's directory, as it was given (relative ones stay relative: a matrix job's checkout
    is elsewhere)."""
    wave: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    role: str | None = None
    problems: tuple[str, ...] = ()
    """Why its stack file cannot be read, by file and key path (only from ``fleet_stacks(strict=False)``)."""

    @property
    def name(self) -> str:
        """The fully qualified name, ``organization/<project>/<stack>``: unique across projects."""
        return qualified_name(self.project, self.stack)

    def matches(self, selector: Mapping[str, str]) -> bool:
        """True when every ``key=value`` of ``selector`` is one of its labels."""
        return all(self.labels.get(key) == value for key, value in selector.items())


def qualified_name(project: str, stack: str) -> str:
    """``organization/<project>/<stack>``."""
    return f"{FLEET_ORG}/{project}/{stack}"


def parse_selector(text: str | None) -> dict[str, str]:
    """``key=value[,key=value...]`` as a mapping; an ``ArgumentError`` names the part that is not one.

    Equality only, as ``kubectl -l`` reads its simplest form; an empty text selects everything.
    """
    selector: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip() and text and text.strip():
            raise ArgumentError(f"selector {text!r}: an empty part between commas")
        if not part.strip():
            continue
        key, sep, value = part.strip().partition("=")
        key, value = key.strip(), value.strip()
        problem = "is not key=value" if not sep or "=" in value else checks.label_problem(key, value)
        if problem is not None:
            raise ArgumentError(f"selector part {part.strip()[:80]!r}: {problem}")
        if key in selector and selector[key] != value:
            raise ArgumentError(f"selector names {key!r} twice, with two values: no stack could match")
        selector[key] = value
    return selector


def _fleet_section(project: Project, stack: str, where: Path) -> Any:
    """The stack's ``gitops-infra:fleet`` value as the engine would give it to a program (``None`` without
    one: :meth:`Project.read_stack_settings`, a bare ``fleet`` key in this project's own files, or the
    project's default); a ``ConfigError`` when the file cannot be read or the stack's name is one Pulumi
    refuses."""
    try:
        name = parse_stack_name(stack)
    except StackNameError as exc:
        raise ConfigError([f"{where}: {exc}"]) from None
    settings = project.read_stack_settings(name, shown_as=str(where))
    values = settings.values(FLEET_KEY)
    if len(values) > 1:
        raise ConfigError(
            [f"{where}: sets {FLEET_KEY} twice with two values ({FLEET_SECTION} too): Pulumi takes either"]
        )
    return values[0].value if values else None


def _deployment_settings(path: Path) -> bool:
    """True when ``Pulumi.<stack>.deploy.yaml`` holds Pulumi Deployments' settings, as Pulumi reads it,
    rather than the settings of a stack named ``<stack>.deploy``: it holds none of a stack file's keys.
    One that cannot be read is listed, with its error: which of the two it is cannot be told."""
    try:
        return not any(key in STACK_KEYS for key in read_mapping(path))
    except ConfigError:
        return False


def _project_stacks(project: Project, shown: Path) -> Iterable[FleetStack]:
    files = project.stack_files()
    for stack, path in files.items():
        if stack.endswith(DEPLOYMENT_SUFFIX) and _deployment_settings(path):
            continue
        where = shown / path.relative_to(project.path) if path.is_relative_to(project.path) else path
        try:
            spec, found = fleet_spec(_fleet_section(project, stack, where))
            problems = tuple(f"{where}: {problem}" for problem in found)
        except ConfigError as exc:
            spec, problems = FleetSpec(), exc.problems
        yield FleetStack(
            project=project.name,
            stack=stack,
            project_dir=shown,
            wave=spec.wave,
            labels=dict(spec.labels),
            role=spec.role,
            problems=problems,
        )


def project_here(start: Path | None = None) -> Path:
    """The project at or above ``start`` (the current directory), relative to the current directory, as
    a ``--project`` would name it: a matrix job's checkout is in another directory."""
    return Path(os.path.relpath(find_project_dir(start)))


def fleet_stacks(
    projects: Sequence[Path] = (),
    *,
    selector: Mapping[str, str] | None = None,
    wave: int | None = None,
    strict: bool = True,
) -> tuple[FleetStack, ...]:
    """The stacks of ``projects`` (default: the project at or above the current directory), by name.

    Each is a stack with a settings file where the engine reads them (``Pulumi.<stack>.yaml``, in the
    project's ``stackConfigDir``, with its ``Pulumi.yaml``'s extension), Pulumi Deployments' settings
    (``Pulumi.<stack>.deploy.yaml``) aside; ``selector`` keeps those with all its labels, ``wave``
    those of that wave. A stack file that cannot be read (a bad fleet section, not YAML, a name Pulumi
    refuses) is a ``ConfigError`` listing every problem by file and key path; with ``strict=False`` that
    stack is kept instead, whatever the selection (it may belong to it), carrying its ``problems``: a
    fleet-wide check then reports it as that stack's error and checks the others. A stack named twice (one
    project given under two paths, two copies of a project) and a fleet with no stack file at all are
    ``WorkspaceError``s, as a job pointed at the wrong place would be.
    """
    directories = list(projects) or [project_here()]
    found: dict[str, FleetStack] = {}
    for directory in directories:
        if not directory.is_dir():
            raise WorkspaceError(f"project directory {str(directory)!r} does not exist")
        if find_settings(directory, PROJECT_FILE) is None:
            raise WorkspaceError(f"no Pulumi.yaml in {str(directory)!r}: not a Pulumi project directory")
        project = Project.load(directory.resolve())
        for stack in _project_stacks(project, directory):
            other = found.get(stack.name)
            if other is not None and other.project_dir.resolve() != stack.project_dir.resolve():
                raise WorkspaceError(
                    f"stack {stack.name} is in two project directories, {other.project_dir} and "
                    f"{stack.project_dir}: each stack must have one home"
                )
            found[stack.name] = stack
    problems = [problem for stack in found.values() for problem in stack.problems]
    if problems and strict:
        raise ConfigError(sorted(problems))
    if not found:
        where = ", ".join(str(d) for d in directories)
        raise WorkspaceError(f"no stack file (Pulumi.<stack>.yaml) in {where}: no stacks in the fleet")
    return tuple(
        s
        for _, s in sorted(found.items())
        if s.problems or ((wave is None or s.wave == wave) and s.matches(selector or {}))
    )


def shard_index(name: str, count: int) -> int:
    """The shard (``0`` to ``count - 1``) that the stack of fully qualified ``name`` belongs to."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class Shard:
    """``I/N``: the ``I``-th of ``N`` shards of a fleet (``0 <= I < N``)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_SHARDS:
            raise ArgumentError(f"shard count must be 1 to {MAX_SHARDS}, not {self.count}")
        if not 0 <= self.index < self.count:
            raise ArgumentError(
                f"shard {self.index}/{self.count}: the index counts from 0 to {self.count - 1}"
            )

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @classmethod
    def parse(cls, text: str, environ: Mapping[str, str] | None = None) -> Shard:
        """``I/N``, or ``auto/N`` with ``I`` from ``JOB_COMPLETION_INDEX`` (an Indexed Job's pod)."""
        index, sep, count = text.strip().partition("/")
        if not sep or not re.fullmatch(r"[0-9]{1,6}", count):
            raise ArgumentError(f"shard {text[:40]!r}: must be I/N (for example 0/4) or auto/N")
        if index == "auto":
            env = os.environ if environ is None else environ
            index = env.get(JOB_INDEX_VAR, "")
            if not re.fullmatch(r"[0-9]{1,6}", index):
                raise ArgumentError(
                    f"shard auto/{count}: {JOB_INDEX_VAR} must hold the index (an Indexed Job's pods "
                    "have it), " + (f"not {index[:20]!r}" if index else "and is unset")
                )
        elif not re.fullmatch(r"[0-9]{1,6}", index):
            raise ArgumentError(f"shard {text[:40]!r}: I must be a number from 0 to N-1, or auto")
        return cls(int(index), int(count))

    def holds(self, name: str) -> bool:
        """True when the stack of fully qualified ``name`` is in this shard."""
        return shard_index(name, self.count) == self.index

    def of(self, stacks: Iterable[FleetStack]) -> tuple[FleetStack, ...]:
        """The stacks of this shard, in their order."""
        return tuple(s for s in stacks if self.holds(s.name))
