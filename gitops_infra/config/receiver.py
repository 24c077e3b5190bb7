"""``gitops-infra:flux.receiver``, optional: instant sync, a Flux webhook ``Receiver`` that GitHub's push
events reach, so that Flux fetches a commit at once instead of at its next ``gitInterval``.

The public URL is ``url``, else derived from the contract: ``https://flux-webhook.<baseDomain>``
(:data:`RECEIVER_HOST`). ``webhook: false`` is for a cluster GitHub cannot reach: the Receiver and its
token are made, and no GitHub webhook.

Example::

    receiver = ReceiverSpec.model_validate({})
    assert receiver.enabled and receiver.public_url("example.com") == "https://flux-webhook.example.com"
"""

from __future__ import annotations

from typing import Annotated

from pydantic import StrictBool

from gitops_infra import checks
from gitops_infra.config._fields import ConfigModel, gate

__all__ = ["RECEIVER_HOST", "ReceiverSpec"]

RECEIVER_HOST = "flux-webhook"
"""The host name under the contract's ``baseDomain`` that the Receiver's URL is derived with."""


class ReceiverSpec(ConfigModel):
    """A Flux ``Receiver`` of GitHub's ``push`` (and ``ping``) events on the fleet repository.

    ``url`` is where GitHub reaches notification-controller's ``webhook-receiver`` Service (an Ingress
    or a LoadBalancer you put in front of it); unset, ``https://flux-webhook.<baseDomain>``. The webhook
    is registered on ``git.owner``/``git.repository`` at that URL plus the Receiver's path, unless
    ``webhook`` is false.
    """

    enabled: StrictBool = True
    url: Annotated[str, gate(checks.receiver_url_problem)] | None = None
    webhook: StrictBool = True
    """Register the GitHub repository webhook; false where GitHub cannot reach the cluster."""

    def public_url(self, base_domain: str) -> str:
        """The URL GitHub posts to, before the Receiver's path: ``url``, else derived from
        ``base_domain``; with no trailing ``/``."""
        url = self.url if self.url is not None else f"https://{RECEIVER_HOST}.{base_domain}"
        return url.rstrip("/")
