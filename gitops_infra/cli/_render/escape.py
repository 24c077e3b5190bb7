"""Text a result carries (names, messages, values), made safe to show: the one place it is escaped.

Stack names come from file names, resource names and messages from programs and commits, values from
the cloud: any of them may be hostile. On a terminal a control character (an escape sequence, a
carriage return, a bidi override) could rewrite what was printed before it; in a CI log a line could
be read as a workflow command (``::error::``, ``##[add-mask]``); in a pull-request comment a name could
open a link, an image, a mention or an HTML comment.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["one_line", "printable"]

_CONTROL = ("Cc", "Cf", "Zl", "Zp")
"""Unicode categories shown as escapes: controls, format characters (bidi overrides, zero-widths) and
line or paragraph separators."""


def _escaped(character: str) -> str:
    point = ord(character)
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


# GitHub's runner reads a log line as a workflow command when it starts with "::" (leading whitespace
# aside), and when "##[" is anywhere in it (actions/runner, ActionCommand.TryParseV2 and TryParse): one
# could annotate the run, mask text, set an output or stop the reading of commands.
_WORKFLOW_COMMAND = re.compile(r"^([^\S\n]*)::|##\[", re.MULTILINE)


def _no_command(found: re.Match[str]) -> str:
    # \u escapes, not \x: the text may be inside a JSON string, where this one reads back as it was.
    return f"{found.group(1)}\\u003a:" if found.group(1) is not None else "#\\u0023["


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control and format character written as an escape (``\\x1b``, ``\\u202e``), and
    no line a CI workflow command (``::error::`` starts ``\\u003a:error::``, ``##[`` is ``#\\u0023[``).

    Tabs stay, and newlines too with ``keep_newlines`` (a multi-line message printed as such).
    """
    kept = "\t\n" if keep_newlines else "\t"
    shown = "".join(_escaped(c) if c not in kept and unicodedata.category(c) in _CONTROL else c for c in text)
    return _WORKFLOW_COMMAND.sub(_no_command, shown)


_SPACE = re.compile(r"[ \t\n\r\f\v\u0085\u2028\u2029]+")


def one_line(text: str) -> str:
    """``text`` on one line: each run of whitespace (newlines included) one space, controls escaped."""
    return printable(_SPACE.sub(" ", text).strip())
