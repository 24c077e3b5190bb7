"""The real engine reads a stack's settings where and as ``Project.read_stack_settings`` does (issue 44).

For each layout the guards got wrong (item 1), the engine's own view of the stack's config
(``pulumi config --json``, which applies the project's defaults as an update does) names the same
environment as our reader; and a stack file's scalars are what our YAML 1.2 reading makes of them
(item 19). ``pulumi stack init`` writes the stack's salt into the file the engine reads: the one our reader
names.
"""

from __future__ import annotations

import datetime
import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitops_infra.automation._state.project import Project
from gitops_infra.automation.stack_name import parse_stack_name

from ..support import Engine
from ..unit.test_stack_files import YAML_1_2
from ..unit.test_teardown import ENGINE_LAYOUTS

DEV = parse_stack_name("dev")
# Those the engine reads at all: an ESC import needs Pulumi Cloud, and a bad key is refused.
READ_BY_THE_ENGINE = [name for name, (_, expected) in ENGINE_LAYOUTS.items() if "production" in expected]


def _pulumi(engine: Engine, root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(engine.pulumi), *args, "--stack", "dev", "--non-interactive"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _engine_config(engine: Engine, root: Path, env: dict[str, str]) -> dict[str, Any]:
    created = _pulumi(engine, root, env, "stack", "init")
    assert created.returncode == 0, created.stderr
    listed = _pulumi(engine, root, env, "config", "--json")
    assert listed.returncode == 0, listed.stderr
    config: dict[str, Any] = json.loads(listed.stdout)
    return config


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.mark.parametrize("layout", READ_BY_THE_ENGINE)
def test_the_engine_reads_the_environment_where_the_guard_reads_it(
    engine: Engine, engine_env: dict[str, str], tmp_path: Path, layout: str
) -> None:
    root = tmp_path / "p"
    files, _ = ENGINE_LAYOUTS[layout]
    _write(root, files)
    theirs = _engine_config(engine, root, engine_env)
    settings = Project.find(root).read_stack_settings(DEV)
    (ours,) = settings.values("p:environment")
    value = ours.value if isinstance(ours.value, str) else json.dumps(ours.value)
    assert json.loads(theirs["p:environment"]["value"]) == json.loads(value) == {"name": "production"}
    # `stack init` saved the stack's salt in the file the engine reads: the one we name.
    assert "encryptionsalt:" in settings.path.read_text() or '"encryptionsalt"' in settings.path.read_text()


def _as_the_engine_gives_it(value: object) -> str:
    """A config value as the engine hands it to a program: text as is, the rest as Go's JSON writes it,
    and a timestamp as Go's ``time.Time.String()`` (resource/config/object.go)."""
    if isinstance(value, str):
        return value
    if isinstance(value, datetime.date):
        return f"{value:%Y-%m-%d} 00:00:00 +0000 UTC"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))  # Go's JSON writes 1000, not 1000.0
    return json.dumps(value)


# The scalars a plain config value can hold (a null one, or a NaN, is no config value to the engine; a
# zone-less time prints its zone as Go's Local).
SCALARS = [
    (text, value)
    for text, value in YAML_1_2
    if value is not None
    and not (isinstance(value, float) and math.isnan(value))
    and not isinstance(value, datetime.datetime)
]


def test_the_engine_reads_a_stack_file_s_scalars_as_our_reader_does(
    engine: Engine, engine_env: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "p"
    keys = {f"p:v{index}": text for index, (text, _) in enumerate(SCALARS)}
    _write(
        root,
        {
            "Pulumi.yaml": "name: p\nruntime: python\n",
            "Pulumi.dev.yaml": "config:\n" + "".join(f"  {key}: {text}\n" for key, text in keys.items()),
        },
    )
    theirs = _engine_config(engine, root, engine_env)
    ours = Project.find(root).read_stack_settings(DEV)
    for key, text in keys.items():
        (setting,) = ours.values(key)
        assert (text, theirs[key]["value"]) == (text, _as_the_engine_gives_it(setting.value))
