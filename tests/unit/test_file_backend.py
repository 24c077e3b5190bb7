"""Reading a file backend's history entries directly, as ``pulumi stack history`` reads them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gitops_infra.automation._state.file_backend import FileBackendStack


def _stack(root: Path) -> FileBackendStack:
    found = FileBackendStack.of(root.as_uri(), org=None, project="fixture", name="dev")
    assert found is not None
    return found


def _entry(directory: Path, stamp: int, suffix: str = ".history.json", **fields: object) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"kind": "update", "result": "succeeded", **fields}).encode()
    path = directory / f"dev-{stamp}{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    # The backend keeps a checkpoint copy and attributes beside each entry; neither is an entry.
    (directory / f"dev-{stamp}.checkpoint.json").write_text("{}")
    (directory / f"dev-{stamp}{suffix}.attrs").write_text("{}")


@pytest.mark.parametrize("layout", [("fixture", "dev"), ("dev",)])
def test_the_newest_entry_and_the_count_in_either_layout(tmp_path: Path, layout: tuple[str, ...]) -> None:
    history = tmp_path.joinpath(".pulumi", "history", *layout)
    _entry(history, 1796054765969478718, message="first")
    _entry(history, 1796054768194395663, ".history.json.gz", message="second")
    _entry(history, 1796054767000000000, message="middle")

    assert _stack(tmp_path).newest_history_entry() == (
        3,
        {"kind": "update", "result": "succeeded", "message": "second"},
    )
    assert [e["message"] for e in _stack(tmp_path).history_entries() or []] == ["second", "middle", "first"]


def test_no_history_or_an_unreadable_entry_is_none(tmp_path: Path) -> None:
    stack = _stack(tmp_path)
    assert stack.newest_history_entry() is None
    assert stack.history_entries() is None

    history = tmp_path / ".pulumi" / "history" / "fixture" / "dev"
    _entry(history, 1, message="readable")
    assert stack.history_entries() == [{"kind": "update", "result": "succeeded", "message": "readable"}]
    _entry(history, 2, ".history.json.zst")  # no zstd here: the engine is asked instead
    assert stack.newest_history_entry() is None
    assert stack.history_entries() is None

    (history / "dev-2.history.json.zst").unlink()
    _entry(history, 3)
    (history / "dev-3.history.json").write_text('{"kind": "upd')  # cut short
    assert stack.newest_history_entry() is None
    assert stack.history_entries() is None

    (history / "dev-3.history.json").write_text("{}")
    (history / "dev-1.history.json").write_text("[]")  # an older entry that is no entry: all or none
    assert stack.newest_history_entry() == (2, {})
    assert stack.history_entries() is None


def test_the_checkpoint_s_resource_types_are_read_without_the_engine(tmp_path: Path) -> None:
    # How the GitOps layer tells a stack without Flux at no cost: no engine command, no secret decrypted.
    files = FileBackendStack(root=tmp_path / ".pulumi", org="organization", project="p", name="dev")
    assert files.resource_types() is None  # no checkpoint yet
    path = tmp_path / ".pulumi" / "stacks" / "p" / "dev.json"
    path.parent.mkdir(parents=True)
    resources = [
        {"type": "pulumi:pulumi:Stack"},
        {"type": "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository"},
    ]
    path.write_text(json.dumps({"version": 3, "checkpoint": {"latest": {"resources": resources}}}))
    assert files.resource_types() == {
        "pulumi:pulumi:Stack",
        "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository",
    }
    path.write_text('{"version": 3, "checkpoint": {"lat')  # cut short: the engine is asked instead
    assert files.resource_types() is None


_HOLDER = {"pid": 4242, "username": "ci", "hostname": "runner-7", "timestamp": "2026-12-04T12:00:00Z"}


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        pytest.param("a4c8.json", b"", "is empty", id="empty"),
        pytest.param("a4c8.json", b'{"pid": 4242, "user', "is not valid JSON", id="cut short"),
        pytest.param("a4c8.json", b"{}", "names no holder", id="JSON that names no holder"),
        # A write that died before its rename: the blob library writes the lock beside its place first.
        pytest.param("a4c8.json.18a2b3c4d5e6f708.tmp", b"", "is empty", id="a write's temporary file"),
    ],
)
@pytest.mark.parametrize("layout", [("organization", "fixture", "dev"), ("dev",)])
def test_a_lock_file_that_names_no_holder_is_a_damaged_lock_not_no_lock(
    tmp_path: Path, layout: tuple[str, ...], name: str, content: bytes, problem: str
) -> None:
    # The engine takes every file of the lock directory for a lock and fails on this one, so every command
    # on the stack fails; `status` said "unlocked" and `recover` "No stale lock found".
    directory = tmp_path.joinpath(".pulumi", "locks", *layout)
    directory.mkdir(parents=True)
    (directory / name).write_bytes(content)
    (directory / "a4c8.json.attrs").write_text("{}")  # the blob library's sidecar: no lock

    stack = _stack(tmp_path)

    assert stack.locks() == []
    (damaged,) = stack.damaged_locks()
    assert damaged.path == directory / name
    assert problem in str(damaged) and str(directory / name) in str(damaged)


def test_a_readable_lock_names_its_holder_beside_a_damaged_one(tmp_path: Path) -> None:
    directory = tmp_path / ".pulumi" / "locks" / "organization" / "fixture" / "dev"
    directory.mkdir(parents=True)
    (directory / "live.json").write_text(json.dumps(_HOLDER))
    (directory / "dead.json").write_text("")

    stack = _stack(tmp_path)

    (lock,) = stack.locks()
    assert (str(lock), lock.path) == ("ci@runner-7 pid 4242", directory / "live.json")
    assert [d.path.name for d in stack.damaged_locks()] == ["dead.json"]


def test_a_lock_released_between_the_listing_and_the_read_is_no_lock(tmp_path: Path) -> None:
    directory = tmp_path / ".pulumi" / "locks" / "organization" / "fixture" / "dev"
    directory.mkdir(parents=True)
    (directory / "gone.json").symlink_to(tmp_path / "released.json")  # what a release in between reads as

    assert _stack(tmp_path).locks() == [] and _stack(tmp_path).damaged_locks() == []
