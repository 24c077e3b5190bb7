"""One fleet report from what many jobs printed: the ``--json`` output of shards and matrix jobs.

Each input is a file, or a directory whose ``*.json`` files are read (an artifact download). A file
holds one or more JSON documents, one after the other (``kubectl logs`` of an Indexed Job's pods):

- ``drift --all --json``, of the fleet or of one shard (``{"stacks": [...], "shard": "I/N"}``);
- ``drift STACK --json``, of one stack (``{"stack": ..., "project": ..., "resources": [...]}``);
- an error document, ``{"error": {"type": ..., "message": ...}}``: the job failed. With the ``stack`` and
  ``project`` that ``drift STACK --json`` adds to it, it is that stack's error; else the file is unread.

The merge depends on nothing but the inputs' contents: not their order, nor their names. A stack seen
twice (a retried job) keeps its newest result. What cannot be counted is named in ``unread``: a file
that is missing or is not one of the above, a failed job, and a shard ``I/N`` none of whose results came
when others of the ``N`` did.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..errors import ArgumentError
from .fleet import FleetDrift, StackDrift, StackError
from .inventory import Shard
from .results import DriftReport

__all__ = ["MAX_REPORT_BYTES", "merge_drift_reports"]

MAX_REPORT_BYTES = 256 * 1024 * 1024
"""A shard's output for hundreds of stacks is megabytes; a larger file is not one of ours."""

_STACK_DRIFT = TypeAdapter(StackDrift)
_DRIFT_REPORT = TypeAdapter(DriftReport)
_OLDEST = datetime.min.replace(tzinfo=UTC)


def _files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        yield from sorted(p for p in path.rglob("*.json") if p.is_file())
    else:
        yield path


def _documents(text: str) -> Iterator[Any]:
    """Each JSON document in ``text``, one after the other (whitespace between them)."""
    decoder = json.JSONDecoder()
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return
        document, at = decoder.raw_decode(text, at)
        yield document


def _stacks(document: Any, shown: str, unread: list[str], shards: dict[int, set[int]]) -> list[StackDrift]:
    if not isinstance(document, dict):
        unread.append(f"{shown}: not a drift report (a JSON {type(document).__name__})")
        return []
    if "error" in document and isinstance(document["error"], dict):
        error = StackError(str(document["error"].get("type", "?")), str(document["error"].get("message", "")))
        stack, project = document.get("stack"), document.get("project")
        if isinstance(stack, str) and isinstance(project, str) and "/" not in stack:
            return [StackDrift(stack=stack, report=None, error=error, project=project)]
        unread.append(f"{shown}: the job failed: {error.type}: {error.message[:500]}")
        return []
    try:
        if isinstance(document.get("stacks"), list):
            shard = document.get("shard")
            if shard is not None:
                try:
                    parsed = Shard.parse(str(shard), environ={})
                except ArgumentError:  # "0/99999999999" would be that many missing shards
                    unread.append(f"{shown}: not a drift report (shard {str(shard)[:40]!r})")
                    return []
                shards.setdefault(parsed.count, set()).add(parsed.index)
            return [_STACK_DRIFT.validate_python(stack) for stack in document["stacks"]]
        if "resources" in document:
            report = _DRIFT_REPORT.validate_python(document)
            return [
                StackDrift(
                    stack=report.stack, report=report, project=report.project, checked_at=report.checked_at
                )
            ]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        unread.append(f"{shown}: not a drift report ({where}: {first['msg']})")
        return []
    unread.append(f"{shown}: not a drift report (neither `stacks` nor `resources`)")
    return []


def _newest(a: StackDrift, b: StackDrift) -> StackDrift:
    def key(s: StackDrift) -> tuple[datetime, str]:
        # Equal times (or none): the same choice whatever the order, by the result's own text.
        return (s.checked_at or _OLDEST, repr(s))

    return max(a, b, key=key)


def merge_drift_reports(inputs: Sequence[Path]) -> FleetDrift:
    """Every result in ``inputs`` as one :class:`~gitops_infra.automation.FleetDrift`, by stack name.

    Nothing here raises for a bad input: each is named in ``unread``, and the rest are merged.
    """
    unread: list[str] = []
    shards: dict[int, set[int]] = {}
    merged: dict[str, StackDrift] = {}
    for given in inputs:
        if not given.exists():
            unread.append(f"{given}: no such file or directory")
            continue
        files = list(_files(given))
        if not files:
            unread.append(f"{given}: a directory with no .json file")
        for path in files:
            if not path.is_file():  # a FIFO or a device would block the read, or never end
                unread.append(f"{path}: not a regular file")
                continue
            try:
                if path.stat().st_size > MAX_REPORT_BYTES:
                    unread.append(f"{path}: larger than {MAX_REPORT_BYTES} bytes; not a drift report")
                    continue
                documents = list(_documents(path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
                unread.append(f"{path}: unreadable ({type(exc).__name__}: {str(exc)[:200]})")
                continue
            if not documents:
                unread.append(f"{path}: empty (the job printed nothing)")
            for document in documents:
                for stack in _stacks(document, str(path), unread, shards):
                    merged[stack.name] = _newest(merged[stack.name], stack) if stack.name in merged else stack
    for count, seen in sorted(shards.items()):
        unread += [f"shard {index}/{count}: no result" for index in range(count) if index not in seen]
    return FleetDrift(
        stacks=tuple(merged[name] for name in sorted(merged)), unread=tuple(sorted(set(unread)))
    )
