"""One fleet report from what many jobs printed: the ``--json`` output of shards and matrix jobs.

Each input is a file, or a directory whose ``*.json`` files are read (an artifact download). A file
holds one or more JSON documents, one after the other (``kubectl logs`` of an Indexed Job's pods):

- ``drift --all --json``, of the fleet or of one shard (``{"stacks": [...], "shard": "I/N"}``);
- ``drift STACK --json``, of one stack (``{"stack": ..., "project": ..., "resources": [...]}``);
- an error document, ``{"error": {"type": ..., "message": ...}}``: the job failed. With the ``stack`` and
  ``project`` that ``drift STACK --json`` adds to it, it is that stack's error; else the file is unread.

The merge depends on nothing but the inputs' contents: not their order, nor their names. A stack seen
twice (a retried job) keeps its newest result, by ``checked_at``; when a result has no time, which is
newer is unknown, so the worst of them is kept and the doubt is named. What cannot be counted is named
in ``unread``: a file that is missing or is not one of the above, a failed job, and a shard ``I/N`` none
of whose results came when others of the ``N`` did.

Anyone who can write an artifact or a pod log writes these inputs, so a document is refused (named in
``unread``, never a traceback) when it holds what none of ours does: a value nested deeper than
``MAX_DEPTH``, an integer longer than Python reads (4,300 digits), ``NaN`` or an infinity (not JSON),
a string that is not Unicode text (a lone surrogate), a time without a time zone, or a stack or
project name Pulumi would refuse (a name is printed at the start of a line).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator, Sequence
from dataclasses import fields, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..._files import FileRefused, FileTooLarge, read_regular_file
from ...errors import ArgumentError, StackNameError
from ..results.drift import DriftReport
from ..stack_name import parse_stack_name
from .inventory import Shard, qualified_name
from .results import FleetDrift, StackDrift, StackError

__all__ = ["MAX_DEPTH", "MAX_REPORT_BYTES", "merge_drift_reports"]

MAX_REPORT_BYTES = 256 * 1024 * 1024
"""A shard's output for hundreds of stacks is megabytes; a larger file is not one of ours."""
MAX_DEPTH = 100
"""How deeply a document's values may nest. Ours nest about ten levels around a resource's values, and
those a few dozen at most; 600 levels decode, but then fail ``--json``'s encoder (a ``RecursionError``)."""

_STACK_DRIFT = TypeAdapter(StackDrift)
_DRIFT_REPORT = TypeAdapter(DriftReport)
_TIME = TypeAdapter(datetime | None)


class _Refused(ValueError):
    """A document JSON decodes, but that none of ours is; ``str()`` says why."""


def _files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        # Not only the regular files: a FIFO named *.json is named as such, never skipped unsaid.
        yield from sorted(p for p in path.rglob("*.json") if not p.is_dir())
    else:
        yield path


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # Python 3.11+ refuses to read more digits than sys.get_int_max_str_digits()
        raise _Refused(
            f"an integer of {len(text)} digits; at most {sys.get_int_max_str_digits()} are read"
        ) from None


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 reads as inf, which --json would write as Infinity
        raise _Refused(f"the number {text[:40]} is out of range")
    return value


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def _documents(text: str) -> Iterator[Any]:
    """Each JSON document in ``text``, one after the other (whitespace between them)."""
    decoder = json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=_constant)
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return
        document, at = decoder.raw_decode(text, at)
        _check_values(document)
        yield document


def _check_values(document: Any) -> None:
    """``_Refused`` when ``document`` nests too deeply or holds a string that is not Unicode text.

    Without a recursion: the point is to refuse what would exhaust one.
    """
    pending: list[tuple[Any, int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise _Refused(f"values nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                _check_text(key)
                pending.append((item, depth + 1))
        elif isinstance(value, list):
            pending += [(item, depth + 1) for item in value]
        elif isinstance(value, str):
            _check_text(value)


def _check_text(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (\ud800): no output could encode it
            raise _Refused("a string that is not Unicode text (a lone surrogate)") from None


def _naive_time(value: Any, where: str) -> str | None:
    """The path of a time without a time zone in a result: one cannot be ordered against another."""
    if isinstance(value, datetime):
        return where if value.tzinfo is None or value.utcoffset() is None else None
    if is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            found = _naive_time(getattr(value, f.name), f"{where}.{f.name}" if where else f.name)
            if found:
                return found
    elif isinstance(value, tuple):
        for index, item in enumerate(value):
            found = _naive_time(item, f"{where}.{index}")
            if found:
                return found
    return None


def _name_problem(stack: StackDrift) -> str | None:
    """Why the stack's name is not one Pulumi takes: a text renderer prints it first on a line."""
    try:
        if "/" in stack.stack:  # a stack alone; its project is a field of its own
            raise StackNameError("a stack, not org/project/stack", stack=stack.stack)
        parse_stack_name(qualified_name(stack.project, stack.stack) if stack.project else stack.stack)
    except StackNameError:
        return f"stack {stack.stack[:40]!r} of project {str(stack.project)[:40]!r}: not a Pulumi name"
    return None


def _error_document(document: dict[str, Any], shown: str, unread: list[str]) -> list[StackDrift]:
    error = document["error"]
    kind, message = error.get("type", "?"), error.get("message", "")
    if not isinstance(kind, str) or not isinstance(message, str):
        unread.append(f"{shown}: not a drift report (error: type and message must be strings)")
        return []
    try:
        at = _TIME.validate_python(document.get("checked_at"))
    except ValidationError as exc:
        unread.append(f"{shown}: not a drift report (checked_at: {exc.errors()[0]['msg']})")
        return []
    stack, project = document.get("stack"), document.get("project")
    if isinstance(stack, str) and isinstance(project, str):
        return [
            StackDrift(
                stack=stack, report=None, error=StackError(kind, message), project=project, checked_at=at
            )
        ]
    unread.append(f"{shown}: the job failed: {kind}: {message[:500]}")
    return []


def _stacks(document: Any, shown: str, unread: list[str], shards: dict[int, set[int]]) -> list[StackDrift]:
    shard: Shard | None = None
    if not isinstance(document, dict):
        unread.append(f"{shown}: not a drift report (a JSON {type(document).__name__})")
        return []
    try:
        if "error" in document and isinstance(document["error"], dict):
            found = _error_document(document, shown, unread)
        elif isinstance(document.get("stacks"), list):
            if document.get("shard") is not None:
                try:
                    shard = Shard.parse(str(document["shard"]), environ={})
                except ArgumentError:  # "0/99999999999" would be that many missing shards
                    unread.append(f"{shown}: not a drift report (shard {str(document['shard'])[:40]!r})")
                    return []
            found = [_STACK_DRIFT.validate_python(stack) for stack in document["stacks"]]
        elif "resources" in document:
            report = _DRIFT_REPORT.validate_python(document)
            found = [
                StackDrift(
                    stack=report.stack, report=report, project=report.project, checked_at=report.checked_at
                )
            ]
        else:
            unread.append(f"{shown}: not a drift report (neither `stacks` nor `resources`)")
            return []
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        unread.append(f"{shown}: not a drift report ({where}: {first['msg']})")
        return []
    for stack in found:
        problem = _name_problem(stack)
        naive = _naive_time(stack, "")
        if naive:
            problem = f"{naive}: a time without a time zone"
        if problem:
            unread.append(f"{shown}: not a drift report ({problem})")
            return []
    if shard is not None:  # only a shard read whole counts as come
        shards.setdefault(shard.count, set()).add(shard.index)
    return found


def _severity(s: StackDrift) -> tuple[int, str]:
    return (2 if s.error is not None else 1 if s.has_drift or not s.healthy else 0, repr(s))


def _one_result(name: str, seen: list[StackDrift], unread: list[str]) -> StackDrift:
    """Of a stack's results, the newest; the worst of those that cannot be ordered, and the doubt named.

    A result without a time (an older version's error document) could be older or newer than any
    other: letting any timed success outweigh it would hide a failure.
    """
    if len(seen) == 1:  # the rule for a fleet of thousands: one result a stack, nothing to weigh
        return seen[0]
    distinct: list[StackDrift] = []
    for result in sorted(seen, key=repr):  # not a set: a drifted value may be a JSON object
        if result not in distinct:
            distinct.append(result)
    timed = [s for s in distinct if s.checked_at is not None]
    untimed = [s for s in distinct if s.checked_at is None]
    # Equal times: the same choice whatever the order, by the result's own text.
    newest = max(timed, key=lambda s: (s.checked_at, repr(s)), default=None)
    if not untimed:
        assert newest is not None
        return newest
    candidates = [*untimed, *([newest] if newest is not None else [])]
    if len(candidates) > 1:
        unread.append(
            f"{name}: {len(candidates)} results, and {len(untimed)} without a time (checked_at): which is "
            "newest is unknown, so the worst is shown"
        )
    return max(candidates, key=_severity)


def merge_drift_reports(inputs: Sequence[Path]) -> FleetDrift:
    """Every result in ``inputs`` as one :class:`~gitops_infra.automation.FleetDrift`, by stack name.

    Nothing here raises for a bad input: each is named in ``unread``, and the rest are merged.
    """
    unread: list[str] = []
    shards: dict[int, set[int]] = {}
    seen: dict[str, list[StackDrift]] = {}
    for given in inputs:
        if not given.exists():
            unread.append(f"{given}: no such file or directory")
            continue
        files = list(_files(given))
        if not files:
            unread.append(f"{given}: a directory with no .json file")
        for path in files:
            try:
                text = read_regular_file(path, MAX_REPORT_BYTES).decode("utf-8")
                documents = list(_documents(text))
            except FileTooLarge as exc:
                unread.append(f"{path}: {exc}; not a drift report")
                continue
            except FileRefused as exc:  # a FIFO or a device would block the read, or never end
                unread.append(f"{path}: {exc}")
                continue
            except _Refused as exc:
                unread.append(f"{path}: not a drift report ({exc})")
                continue
            except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
                unread.append(f"{path}: unreadable ({type(exc).__name__}: {str(exc)[:200]})")
                continue
            if not documents:
                unread.append(f"{path}: empty (the job printed nothing)")
            for document in documents:
                for stack in _stacks(document, str(path), unread, shards):
                    seen.setdefault(stack.name, []).append(stack)
    for count, indexes in sorted(shards.items()):
        unread += [f"shard {index}/{count}: no result" for index in range(count) if index not in indexes]
    stacks = tuple(_one_result(name, seen[name], unread) for name in sorted(seen))
    return FleetDrift(stacks=stacks, unread=tuple(sorted(set(unread))))
