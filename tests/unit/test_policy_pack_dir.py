"""The bundled policy pack, made ready for the interpreter that runs gitops-infra (``pack_dir``)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from gitops_infra.cli import main
from gitops_infra.errors import WorkspaceError
from gitops_infra.policy import POLICY_PACK, pack_dir, resolve_policy_packs

PACKAGE_POLICY = Path(__file__).resolve().parents[2] / "gitops_infra" / "policy"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_pack_runs_on_this_interpreters_environment_and_is_made_once(cache: Path) -> None:
    made = pack_dir()
    assert made.parent == cache / "gitops-infra" / "policy"
    settings = yaml.safe_load((made / "PulumiPolicy.yaml").read_text())
    assert settings["runtime"] == {"name": "python", "options": {"virtualenv": sys.prefix}}
    shipped = yaml.safe_load((PACKAGE_POLICY / "PulumiPolicy.yaml").read_text())
    assert {k: v for k, v in settings.items() if k != "runtime"} == {
        k: v for k, v in shipped.items() if k != "runtime"
    }
    assert (made / "__main__.py").read_bytes() == (PACKAGE_POLICY / "__main__.py").read_bytes()

    stamp = (made / "PulumiPolicy.yaml").stat().st_mtime_ns
    assert pack_dir() == made
    assert (made / "PulumiPolicy.yaml").stat().st_mtime_ns == stamp, "reused, not written again"
    assert [p.name for p in made.parent.iterdir()] == [made.name], "no staging directory left behind"


def test_another_environment_gets_its_own_copy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    first = pack_dir()
    odd = tmp_path / 'an env with "quotes" and spaces'
    monkeypatch.setattr(sys, "prefix", str(odd))
    second = pack_dir()
    assert second != first
    assert yaml.safe_load((second / "PulumiPolicy.yaml").read_text())["runtime"]["options"] == {
        "virtualenv": str(odd)
    }


def test_an_unwritable_cache_is_a_clear_error(cache: Path) -> None:
    cache.write_text("a file where the cache directory should be\n")  # fails for root too
    with pytest.raises(WorkspaceError, match=r"could not write the gitops-infra policy pack.*XDG_CACHE_HOME"):
        pack_dir()
    assert cache.read_text() == "a file where the cache directory should be\n"


def test_the_name_stands_for_the_bundled_pack_and_paths_are_made_absolute() -> None:
    mine = str(Path.cwd() / "policies" / "mine")  # where the caller is, not where the engine will run
    assert resolve_policy_packs(["policies/mine", POLICY_PACK]) == [mine, str(pack_dir())]
    assert resolve_policy_packs(["/abs/pack"]) == ["/abs/pack"]
    assert resolve_policy_packs([]) == []


def test_the_cli_prints_the_directory(cache: Path) -> None:
    result = CliRunner().invoke(main, ["policy", "path"])
    assert result.exit_code == 0, result.output
    assert Path(result.output.strip()) == pack_dir()


@pytest.mark.parametrize(
    ("pack", "ok"), [(POLICY_PACK, True), (str(PACKAGE_POLICY), True), ("no/such/dir", False), ("", False)]
)
def test_the_cli_takes_the_name_or_a_directory(pack: str, ok: bool) -> None:
    args = ["preview", "dev", "--policy-pack", pack]
    context = main.make_context("gitops-infra", list(args))
    name, command, rest = main.resolve_command(context, args)
    assert command is not None
    if ok:
        command.make_context(str(name), rest, parent=context)
    else:
        with pytest.raises(Exception, match="not a directory, nor 'gitops-infra'"):
            command.make_context(str(name), rest, parent=context)


# -- a cache someone else can write to (a self-hosted runner's ~/.cache, a shared XDG_CACHE_HOME) ----------


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(
            lambda d: (d / "__main__.py").write_text("# every policy is now a no-op\n"), id="the program"
        ),
        pytest.param(lambda d: (d / "PulumiPolicy.yaml").write_text("runtime: python\n"), id="the settings"),
        pytest.param(lambda d: (d / "sitecustomize.py").write_text("import os\n"), id="a file added"),
    ],
)
def test_a_copy_that_differs_from_the_bundled_bytes_is_written_again(tamper: Any) -> None:
    made = pack_dir()
    expected = {p.name: p.read_bytes() for p in made.iterdir()}
    tamper(made)
    assert pack_dir() == made
    assert {p.name: p.read_bytes() for p in made.iterdir()} == expected


def test_a_planted_copy_behind_a_symlink_is_replaced_not_followed(cache: Path, tmp_path: Path) -> None:
    made = pack_dir()
    planted = tmp_path / "planted"
    planted.mkdir()
    for path in made.iterdir():
        (planted / path.name).write_bytes(path.read_bytes())
    (planted / "__main__.py").write_text("# no-op policies\n")
    shutil.rmtree(made)
    made.symlink_to(planted)
    assert pack_dir() == made and not made.is_symlink()
    assert (planted / "__main__.py").read_text() == "# no-op policies\n"  # never written through


@pytest.mark.parametrize(
    ("arrange", "problem"),
    [
        pytest.param(
            lambda c: (c / "gitops-infra").chmod(0o777), "writable by group or others", id="world-writable"
        ),
        pytest.param(
            lambda c: (c / "gitops-infra" / "policy").chmod(0o775), "writable by group", id="group-writable"
        ),
        pytest.param(
            lambda c: (
                (c / "gitops-infra" / "policy").rename(c / "elsewhere"),
                (c / "gitops-infra" / "policy").symlink_to(c / "elsewhere"),
            ),
            "is a symlink",
            id="a symlink",
        ),
    ],
)
def test_a_cache_directory_others_control_is_refused(cache: Path, arrange: Any, problem: str) -> None:
    pack_dir()
    arrange(cache)
    with pytest.raises(WorkspaceError, match=f"the policy pack cache .* {problem}"):
        pack_dir()


def test_a_cache_directory_of_another_user_is_refused(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pack_dir()
    monkeypatch.setattr(os, "getuid", lambda: os.stat(cache).st_uid + 1)  # the cache is now someone else's
    with pytest.raises(WorkspaceError, match="is owned by another user"):
        pack_dir()


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # invalid under the XDG spec
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert pack_dir().is_relative_to(tmp_path / "home" / ".cache" / "gitops-infra" / "policy")


def test_a_relative_policy_pack_is_made_absolute_where_it_was_checked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "packs" / "mine").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    args = ["preview", "dev", "--policy-pack", "packs/mine", "--policy-pack", POLICY_PACK]
    context = main.make_context("gitops-infra", list(args))
    name, command, rest = main.resolve_command(context, args)
    assert command is not None
    made = command.make_context(str(name), rest, parent=context)
    assert made.params["policy_packs"] == (str(tmp_path / "packs" / "mine"), POLICY_PACK)
