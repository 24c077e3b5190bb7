"""The demo's record of the processes it started (``.demo/processes.json``), and its processes found
without the record.

``local up`` writes the record once the cluster and the fleet server run, and ``local down`` stops what it
names, each pid checked against its start time (a reused pid is someone else's). A record can be damaged:
cut short by a crash or a full disk, edited, replaced. A damaged entry is named and the others are used;
and the demo's processes are recognised anyway, since each writes its output to a log under ``.demo/``
(:class:`~gitops_infra.local._processes.Processes`): those are stopped too, recorded or not.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .._validation import validation_problems
from ._processes import STOP_SECONDS

__all__ = ["Record", "Recorded", "Running", "read_record", "running", "stop", "write_record"]

MAX_RECORD_BYTES = 1 << 20
"""A record lists a dozen processes in about 1 KB: anything larger is not one, and is not read whole."""


class Recorded(BaseModel):
    """One process of the record: its name, pid, and start time (``psutil``'s ``create_time``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str = Field(min_length=1)
    pid: int = Field(gt=0)
    started: float


_ENTRY = TypeAdapter(Recorded)


@dataclass(frozen=True)
class Record:
    """What the record names (its entries that are well formed) and what is wrong with it, if anything."""

    entries: tuple[Recorded, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def damaged(self) -> bool:
        return bool(self.problems)


@dataclass(frozen=True)
class Running:
    """A process of the demo's that is running now, and the name to say it by."""

    name: str
    process: psutil.Process


def write_record(path: Path, processes: Iterable[tuple[str, int]]) -> None:
    """Record ``processes`` (``(name, pid)``, each running) at ``path``: whole or not at all."""
    entries = [
        {"name": name, "pid": pid, "started": psutil.Process(pid).create_time()} for name, pid in processes
    ]
    staged = path.with_name(path.name + ".new")
    staged.write_text(json.dumps(entries, indent=2))
    os.replace(staged, path)  # a crash mid-write leaves the old record or none, never half of one


def read_record(path: Path) -> Record:
    """The record at ``path``; an empty one when there is none."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return Record()
    except OSError as exc:
        return Record(problems=(f"cannot be read: {exc.strerror}",))
    if not stat.S_ISREG(info.st_mode):
        return Record(problems=("is not a regular file",))
    if info.st_size > MAX_RECORD_BYTES:
        return Record(problems=(f"is {info.st_size} bytes, larger than any record",))
    try:
        document = json.loads(path.read_bytes())
    except OSError as exc:
        return Record(problems=(f"cannot be read: {exc.strerror}",))
    except (UnicodeDecodeError, ValueError) as exc:  # ValueError: JSON's, and an integer too long
        return Record(problems=(f"is not JSON ({str(exc).splitlines()[0][:200]})",))
    if not isinstance(document, list):
        return Record(problems=(f"holds a JSON {type(document).__name__}, not a list of processes",))
    entries: list[Recorded] = []
    problems: list[str] = []
    for index, entry in enumerate(document):
        try:
            entries.append(_ENTRY.validate_python(entry))
        except ValidationError as exc:
            problems += validation_problems(exc, f"[{index}]")
    return Record(tuple(entries), tuple(problems))


def running(record: Record, root: Path) -> list[Running]:
    """The demo's processes running now, newest first: those of ``record`` (their start time matching)
    and those whose output goes to a file under ``root`` (the demo's ``.demo/``)."""
    found: dict[tuple[int, float], Running] = {}
    for entry in record.entries:
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(entry.pid)
            started = process.create_time()
            if abs(started - entry.started) <= 1:  # else the pid was reused: not ours
                found[(entry.pid, started)] = Running(entry.name, process)
    for process in psutil.process_iter():
        if process.pid == os.getpid():
            continue
        with contextlib.suppress(psutil.Error, OSError):
            logs = [Path(f.path) for f in process.open_files() if f.fd in (1, 2)]
            for log in logs:
                if log.is_relative_to(root):  # named as the harness named its log: `<name>.log`
                    found.setdefault((process.pid, process.create_time()), Running(log.stem, process))
    return [found[key] for key in sorted(found, key=lambda key: key[1], reverse=True)]


def stop(processes: Iterable[Running]) -> list[Running]:
    """Stop each of ``processes`` in turn (SIGTERM, then SIGKILL after a while); those still running."""
    left = []
    for each in processes:
        with contextlib.suppress(psutil.Error):  # gone already, or not ours to signal: checked below
            each.process.send_signal(signal.SIGTERM)
            try:
                each.process.wait(timeout=STOP_SECONDS)
            except psutil.TimeoutExpired:
                each.process.kill()
                each.process.wait(timeout=STOP_SECONDS)
        with contextlib.suppress(psutil.NoSuchProcess):
            if each.process.is_running() and each.process.status() != psutil.STATUS_ZOMBIE:
                left.append(each)
    return left
