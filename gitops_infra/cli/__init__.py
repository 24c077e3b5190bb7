"""``gitops-infra``: a thin command line over :mod:`gitops_infra.automation` for CI jobs and terminals.

Presentation has one home, this package:

- ``_main``: the group, its exit codes and the error boundary every failure exits through;
- ``_invocation``: what a command is given, and the options commands share;
- ``_commands/``: the commands, loaded when one is looked up;
- ``_render/``: every rendering of a result, text, Markdown and JSON;
- ``_output`` and ``_console``: where output goes, and what a failed write means.

Each command parses its arguments, calls one library function and hands the result to a renderer:
commands import renderers, and nothing imports a command module. Exit codes follow
``terraform plan -detailed-exitcode``:

- ``0``: success (and, for ``drift``, no drift);
- ``1``: an error, printed as ``ErrorType: message`` with no traceback;
- ``2``: drift found (``drift``), or changes pending (``preview --expect-no-changes``);
- ``128 + N``: stopped by signal N (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP: a closed terminal).
  The engine is cancelled the way Ctrl-C cancels ``pulumi``: in-flight operations finish and the stack's
  lock is released.

On a terminal, engine events drive a live progress display; without one, each finished step is a plain
line. With ``--json``, every exit writes exactly one JSON document on stdout: the result, or
``{"error": {"type": ..., "message": ...}}`` for any failure, usage errors included.

If stdout is closed early (``gitops-infra up dev --yes | head -1``), output stops there but the operation
runs to its end and releases the stack's lock; the command then exits 1 with a message on stderr.

The CLI starts without the engine: ``--help`` and argument errors import click and nothing heavy. The
library (``pulumi.automation``, the provider SDKs) and rich load when a command runs, as it needs them.
"""

from typing import TYPE_CHECKING

from gitops_infra._lazy import exports

from ._main import EXIT_ERROR, EXIT_OK, EXIT_PENDING, main

if TYPE_CHECKING:
    from ._render import to_markdown

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_PENDING", "main", "to_markdown"]

# The commands' renderings load with the commands: `--help` pays for neither.
__getattr__, __dir__ = exports(__name__)
