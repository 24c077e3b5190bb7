"""``gitops-infra plan``: the offline plan of a stack, as a resource tree, JSON or Markdown."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from ... import automation
from .._invocation import Invocation, command, formats
from .._main import EXIT_OK, end_without_teardown, main
from .._render.plan import print_plan

__all__: list[str] = []


@main.command()
@command
@formats
def plan(invocation: Invocation) -> int:
    """Run STACK's program offline under mocks and print the resources it would create.

    Needs no engine, cloud, credentials or passphrase.
    """
    from ...config import plan_config

    with _collector_paused():
        result = automation.offline_plan(
            invocation.stack, options=invocation.options(), config_step=plan_config
        )
        invocation.emit(result, lambda out: print_plan(out, result))
    end_without_teardown()
    return EXIT_OK


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the plan runs, and as it was afterwards.

    The plan imports the provider SDKs (some 250,000 objects, which live until the process exits), and
    the collector would scan them again each time the heap grows by a quarter, freeing nothing: on
    ``plan dev`` that was a third of the CPU time, for no memory saved (bench/README.md has the figures).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
