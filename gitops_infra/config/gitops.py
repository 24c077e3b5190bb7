"""``gitops-infra:gitops``, optional: which GitOps engine syncs the fleet repository.

Example::

    gitops = GitOpsSpec.model_validate({"engine": "argocd"})
    assert gitops.engine is GitOpsEngine.ARGOCD
"""

from __future__ import annotations

from gitops_infra.config._fields import ConfigModel
from gitops_infra.defaults import GitOpsEngine

__all__ = ["GitOpsSpec"]


class GitOpsSpec(ConfigModel):
    """The engine: ``flux`` (the default: the ``flux`` section configures it) or ``argocd`` (the ``argocd``
    section). The contract, the fleet repository, its deploy key and the proof of sync are the same with
    either; each engine's own settings are refused with the other."""

    engine: GitOpsEngine = GitOpsEngine.FLUX
