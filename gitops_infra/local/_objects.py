"""Objects the harness makes in a local cluster (namespaces, service accounts, bindings, settings), each
made once: a create that finds the object there already keeps what is there.

A part may be started twice on one cluster (a second controller, a restart, a test's own part beside the
session's), and what a stack or a test changed in an object since must stay."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["create_if_absent"]


def create_if_absent(*creates: Callable[[], object]) -> None:
    """Run each of ``creates`` (a client's ``create_*`` call), in order; one answered 409 (the object
    exists) is done. Any other error is raised."""
    from kubernetes.client.exceptions import ApiException

    for create in creates:
        try:
            create()
        except ApiException as exc:
            if exc.status != 409:
                raise
