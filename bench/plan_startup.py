"""``gitops-infra plan dev`` as a subprocess against its real floor; and the CLI's own start,
``gitops-infra --help``, against ``python -c "import click"``, the floor of any click CLI.

The plan's floor (``plan_floor``) is a generated program that imports the same SDK modules and registers
the same resources under the same mocks, with nothing of ours: the work any offline plan of those
resources does. Importing the SDK modules alone, and ``python -c pass``, are context rows.

The SDK packages load their resource modules lazily, so a bare ``import pulumi_aws, ...`` loads almost none
of what the stack program uses (that row is context). The plan's baseline imports exactly the SDK modules a
plan leaves in ``sys.modules`` (found by one plan in a subprocess first): the floor any program creating
those resources pays. ``python -c "import click"`` is the floor of any click CLI's start (context). All
run from the repository root with this interpreter, interleaved, after a warm-up round that also writes
the bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped: an installed package has its bytecode, and an
editable checkout would otherwise compile ours on every run while the SDKs' is precompiled).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

from tests.support import REPO_ROOT

from .plan_floor import floor_program
from .stats import paired_ratio, timed

TARGET = 1.1
"""The plan within 1.1x of its floor: the same resources registered under the same mocks (issue 28)."""
HELP_TARGET = 1.15
"""``gitops-infra --help`` within 1.15x of ``python -c "import click"`` (issue 28)."""
SLOW = ("ours", "floor", "lean", "bare", "used")
FAST = ("help", "pass", "click")
"""Timed apart, interleaved among themselves: a start of some 50 ms is mostly the machine's noise, so the
fast rows take ``FAST_REPEATS`` times as many runs (a second or two in all)."""
FAST_REPEATS = 5
IMPORTS = "import pulumi_aws, pulumi_eks, pulumi_kubernetes, pulumi_github, pulumi_tls"
STACK = "dev"
SDKS = ("pulumi_aws", "pulumi_eks", "pulumi_kubernetes", "pulumi_github", "pulumi_tls")
_LOADED = f"""
import json, sys
from pathlib import Path
from gitops_infra.config import plan_config
from gitops_infra.automation import StackOptions, offline_plan
offline_plan({STACK!r}, options=StackOptions(work_dir=Path.cwd()), config_step=plan_config)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {SDKS!r})))
"""


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "gitops-infra"
    if script.is_file():
        return [str(script)]
    found = shutil.which("gitops-infra")
    if found is None:
        raise SystemExit("no gitops-infra console script: install the package (make setup)")
    return [found]


def _run(args: list[str]) -> str:
    # The plan needs no engine, backend or passphrase; give it none, as on a fresh CI runner.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PULUMI_CONFIG_PASSPHRASE") and k != "PYTHONDONTWRITEBYTECODE"
    }
    result = subprocess.run(args, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({result.returncode}): {result.stderr[-2000:]}")
    return result.stdout


def run(repeats: int) -> dict[str, object]:
    modules: list[str] = json.loads(_run([sys.executable, "-c", _LOADED]))
    plan = json.loads(_run([*_cli(), "plan", STACK, "--json"]))
    with tempfile.TemporaryDirectory(prefix="bench-plan-floor-") as directory:
        floor = floor_program(plan, modules, Path(directory))
        lean = floor_program(plan, modules, Path(directory), lean=True)
        return _timed(repeats, modules, len(plan["resources"]), floor, lean)


def _timed(repeats: int, modules: list[str], resources: int, floor: Path, lean: Path) -> dict[str, object]:
    commands = {
        "ours": [*_cli(), "plan", STACK],
        "floor": [sys.executable, str(floor)],
        "lean": [sys.executable, str(lean)],
        "bare": [sys.executable, "-c", IMPORTS],
        "used": [sys.executable, "-c", f"import {', '.join(modules)}"],
        "help": [*_cli(), "--help"],
        "pass": [sys.executable, "-c", "pass"],
        "click": [sys.executable, "-c", "import click"],
    }
    fast_repeats = FAST_REPEATS * repeats
    print(
        f"[startup] gitops-infra plan {STACK} vs its floor x{repeats}, --help vs click x{fast_repeats}",
        file=sys.stderr,
    )
    for args in commands.values():  # warm-up (bytecode and page cache), untimed
        _run(args)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for names, count in ((SLOW, repeats), (FAST, fast_repeats)):
        for index in range(count):
            for name in names if index % 2 == 0 else reversed(names):
                times[name].append(timed(lambda args=commands[name]: _run(args)))
    medians = {name: median(values) for name, values in times.items()}

    def ratio(name: str, baseline: str) -> float:
        return paired_ratio(times[name], times[baseline])

    plan_floor, help_click = ratio("ours", "floor"), ratio("help", "click")
    return {
        "command": f"gitops-infra plan {STACK}",
        "resources": resources,
        "baseline": f'python -c "{IMPORTS}"',
        "used_modules": modules,
        "repeats": repeats,
        "ours_s": times["ours"],
        "floor_s": times["floor"],
        "baseline_s": times["bare"],
        "used_modules_s": times["used"],
        "ours_median_s": medians["ours"],
        "floor_median_s": medians["floor"],
        "baseline_median_s": medians["bare"],
        "used_modules_median_s": medians["used"],
        "plan_floor_ratio": plan_floor,
        "lean_floor_s": times["lean"],
        "lean_floor_median_s": medians["lean"],
        "plan_lean_floor_ratio": ratio("ours", "lean"),
        "ratio_to_bare": ratio("ours", "bare"),
        "ratio_to_used_modules": ratio("ours", "used"),
        "target": TARGET,
        "meets_target": plan_floor <= TARGET,
        "help_repeats": fast_repeats,
        "help_s": times["help"],
        "pass_s": times["pass"],
        "click_s": times["click"],
        "help_median_s": medians["help"],
        "pass_median_s": medians["pass"],
        "click_median_s": medians["click"],
        "help_click_ratio": help_click,
        "help_ratio_to_pass": ratio("help", "pass"),
        "click_ratio_to_pass": ratio("click", "pass"),
        "help_target": HELP_TARGET,
        "help_meets_target": help_click <= HELP_TARGET,
    }
