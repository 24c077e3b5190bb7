"""The one exception hierarchy of gitops-infra.

Every error this package raises for a user mistake or an engine failure is a ``GitOpsInfraError``, so a
caller (and the CLI) can catch one type and print ``ErrorType: message`` without a traceback::

    GitOpsInfraError
    ├── ArgumentError          a function was called with a value it cannot take (also a ValueError)
    ├── ConfigError            stack config is invalid; lists every problem by its key path
    ├── EnvironmentContractError  an environment ConfigMap breaks the contract (also a ValueError)
    ├── WorkspaceError         no project here, a deleted working directory, no passphrase set
    ├── GitError               no git, not a repository, a worktree git could not make
    ├── EngineNotFoundError    no usable Pulumi CLI; says how to install one
    ├── MissingExtraError      an optional extra is not installed; says how to install it (an ImportError)
    ├── PluginMissingError     the engine needs a plugin that is not installed
    ├── StackNameError         a stack name breaks Pulumi's rules (an empty one, above all)
    ├── StackNotFoundError     the named stack does not exist on the backend
    ├── StackLockedError       another update holds the stack's lock
    ├── ConfirmationRequiredError  destroying a prod stack without naming it
    ├── DrainError             the drain before a destroy did not finish: nothing was destroyed
    ├── EngineSwitchError      a stack cannot hand its fleet to the other GitOps engine now: nothing changed
    ├── PromotionError         a commit not proven on the stack it must be promoted from
    ├── CheckpointError        the stack's state file cannot be read (a full disk cut it short)
    ├── CommitNotFoundError    a rollback target does not resolve to a commit with a Pulumi project
    └── OperationFailedError   the engine ran and the operation failed; carries the engine's message
        │                      (and, for a destroy, what the sweep found left behind)
        └── PolicyViolationError   a mandatory policy blocked it; carries each violation

Context rides on the exception as attributes (the stack, the key paths, the commit), never only in the
message. Messages never contain secret values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .automation.results import SweepResult

__all__ = [
    "ArgumentError",
    "CheckpointError",
    "CommitNotFoundError",
    "ConfigError",
    "ConfirmationRequiredError",
    "DrainError",
    "EngineNotFoundError",
    "EngineSwitchError",
    "EnvironmentContractError",
    "GitError",
    "GitOpsInfraError",
    "MissingExtraError",
    "OperationFailedError",
    "PluginMissingError",
    "PolicyViolation",
    "PolicyViolationError",
    "PromotionError",
    "StackLockedError",
    "StackNameError",
    "StackNotFoundError",
    "WorkspaceError",
]


class GitOpsInfraError(Exception):
    """Base of every error gitops-infra raises on purpose."""


class ArgumentError(GitOpsInfraError, ValueError):
    """A function of the library was called with a value it cannot take (``parallel=0``); nothing ran.

    It is a ``ValueError`` too, as Python's own functions raise for such a value.
    """


class ConfigError(GitOpsInfraError):
    """The stack config is invalid.

    ``problems`` holds one ``"<key path>: <what was expected>"`` line per problem, for example
    ``"gitops-infra:cluster.nodeGroups[0].maxSize: must be >= minSize"``.
    """

    def __init__(self, problems: Sequence[str], *, stack: str | None = None) -> None:
        self.problems = tuple(problems)
        self.stack = stack
        where = f" for stack {stack!r}" if stack else ""
        count = len(self.problems)
        header = f"invalid config{where} ({count} problem{'s' if count != 1 else ''}):"
        super().__init__("\n".join([header, *(f"  - {p}" for p in self.problems)]))


class EnvironmentContractError(GitOpsInfraError, ValueError):
    """An ``environment`` ConfigMap does not hold the contract: a bad or missing key, or a contract
    version this reader does not know. It is a ``ValueError`` too.

    ``problems`` holds one ``"<key>: <what was expected>"`` line per problem.
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__(f"invalid environment ConfigMap: {'; '.join(self.problems)}")


class WorkspaceError(GitOpsInfraError):
    """Where an operation runs cannot serve it: no ``Pulumi.yaml``, no working directory, no passphrase.

    ``stack`` is the stack it was for, when there was one.
    """

    def __init__(self, message: str, *, stack: str | None = None) -> None:
        self.stack = stack
        super().__init__(message)


class GitError(GitOpsInfraError):
    """git is missing, the project is not in a repository, or git refused an operation (a worktree)."""


class EngineNotFoundError(GitOpsInfraError):
    """No usable Pulumi CLI was found."""


class MissingExtraError(GitOpsInfraError, ImportError):
    """A part of gitops-infra needs the packages of an optional extra that is not installed.

    ``extra`` names it; the message says how to install it (``pip install 'gitops-infra[local]'``). It is
    an ``ImportError`` too, since it is raised where the part is imported.
    """

    def __init__(self, message: str, *, extra: str) -> None:
        self.extra = extra
        super().__init__(message)


class PluginMissingError(GitOpsInfraError):
    """The engine needs a resource plugin that is not installed and may not be downloaded."""


class _AboutStack(GitOpsInfraError):
    """An error about one stack, which ``stack`` names."""

    def __init__(self, message: str, *, stack: str) -> None:
        self.stack = stack
        super().__init__(message)


class StackNameError(_AboutStack):
    """A stack name is empty, padded, or breaks Pulumi's naming rules; nothing ran."""


class StackNotFoundError(_AboutStack):
    """The named stack does not exist on the backend."""


class StackLockedError(_AboutStack):
    """Another update is running on the stack and holds its lock."""


class PromotionError(GitOpsInfraError):
    """A promotion, or the ``require_promoted_from`` guard, refused: the commit was not proven on the
    source stack. ``stack`` is that source stack, ``commit`` the commit in question (when there is one),
    ``evidence`` what ``promote`` had found when a check it was asked for failed (a
    ``PromotionEvidence``)."""

    def __init__(self, message: str, *, stack: str, commit: str | None) -> None:
        self.stack = stack
        self.commit = commit
        self.evidence: Any = None
        super().__init__(message)


class ConfirmationRequiredError(_AboutStack):
    """A destructive operation on a prod stack was not confirmed by naming the stack."""


class DrainError(_AboutStack):
    """The drain before a destroy did not finish: the cluster could not be reached, or objects were still
    there when ``drain_timeout`` ran out. The destroy did not begin: the stack's resources are untouched,
    and a destroy run again goes on from where the drain stopped.

    ``remaining`` holds each object still present, with its finalizers (``KubeObject``); empty when the
    cluster could not be reached.
    """

    def __init__(self, message: str, *, stack: str, remaining: Sequence[Any] = ()) -> None:
        self.remaining = tuple(remaining)
        super().__init__(message, stack=stack)


class EngineSwitchError(_AboutStack):
    """A stack cannot hand its fleet from one GitOps engine to the other now: nothing to switch, a switch
    this version does not make, the cluster could not be reached, or the fleet holds what the old engine
    would take down with it. Nothing was changed, in the cluster or in the stack."""


class CheckpointError(GitOpsInfraError):
    """The stack's checkpoint (its state file) cannot be read, so no engine command can run on it.

    ``checkpoint`` is the unreadable file; ``candidate`` the newest intact copy in the backend's history
    that ``recover(..., restore_checkpoint=True)`` would restore, or ``None`` when there is none.
    """

    def __init__(self, message: str, *, stack: str, checkpoint: str, candidate: str | None) -> None:
        self.stack = stack
        self.checkpoint = checkpoint
        self.candidate = candidate
        super().__init__(message)


class CommitNotFoundError(GitOpsInfraError):
    """A rollback target is not a commit, or that commit has no Pulumi project."""

    def __init__(self, message: str, *, commit: str) -> None:
        self.commit = commit
        super().__init__(message)


class OperationFailedError(GitOpsInfraError):
    """The engine ran and the operation failed; ``engine_message`` is what the engine said.

    ``not_ready`` says, for each object the update waited for in vain (a Flux GitRepository or
    Kustomization), why in its controller's words: ``"Kustomization flux-system/flux-system is not Ready
    (ArtifactFailed): kustomization path not found: ..."``. The message leads with them.

    ``sweeps``, for a failed destroy, is the sweep of each EKS cluster the stack had before it
    (``SweepResult``): a destroy fails when AWS still holds what its controllers made (the VPC's delete
    refused for a leftover ENI), so that is when the findings matter most. Empty for another operation,
    and for a destroy stopped by a signal, which is not kept waiting on AWS.
    """

    def __init__(
        self,
        message: str,
        *,
        stack: str,
        operation: str,
        engine_message: str = "",
        not_ready: Sequence[str] = (),
    ) -> None:
        self.stack = stack
        self.operation = operation
        self.engine_message = engine_message
        self.not_ready = tuple(not_ready)
        self.sweeps: tuple[SweepResult, ...] = ()
        super().__init__(message)


@dataclass(frozen=True)
class PolicyViolation:
    """One policy a resource violated, as the engine reported it."""

    pack: str
    policy: str
    level: str
    """``mandatory``, ``advisory`` or ``remediate``."""
    urn: str | None
    """The resource, or ``None`` for a stack-level policy."""
    message: str


class PolicyViolationError(OperationFailedError):
    """A mandatory policy blocked the operation; ``violations`` lists every policy the engine reported."""

    def __init__(
        self,
        message: str,
        *,
        stack: str,
        operation: str,
        violations: Sequence[PolicyViolation],
        engine_message: str = "",
    ) -> None:
        self.violations = tuple(violations)
        super().__init__(message, stack=stack, operation=operation, engine_message=engine_message)
