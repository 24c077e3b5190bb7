"""Pulumi components and an Automation API layer for an EKS + Flux CD GitOps platform.

The public API is what ``__all__`` lists; the components and the automation layer are re-exported here
as they land (see ../shared/DESIGN.md).
"""

__all__: list[str] = []
