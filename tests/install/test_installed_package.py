"""gitops-infra as a user gets it: built into an sdist and a wheel, the wheel installed with its
dependencies into a fresh virtualenv outside this checkout (no ``-e``), and used from there.

The dependencies are downloaded once into ``.tools/wheels`` and installed from it afterwards. Everything
the user runs is the virtualenv's: its ``gitops-infra``, its Python, its copy of the package.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from ..pages import DOCS, code_blocks
from ..support import NO_ENGINE, REPO_ROOT, engine_env, find_engine, unavailable, write_project

pytestmark = pytest.mark.install

ENGINE = find_engine()
WHEELHOUSE = REPO_ROOT / ".tools" / "wheels"
MYPY_CACHE = REPO_ROOT / ".tools" / "mypy-installed"
"""mypy's cache for the check of a user's code: it reads the SDKs' stubs again only when a file changed
(mypy checks each cached module against its source), which saves most of a minute on a second run."""
RUNTIME_FILES = (
    "gitops_infra/py.typed",
    "gitops_infra/policy/PulumiPolicy.yaml",
    "gitops_infra/policy/__main__.py",
)
TIMEOUT = 600
"""Seconds any one command may take (the dependencies' first download included)."""

COMPONENTS_PAGE = DOCS / "components.md"


def _docs_program() -> str:
    """The program of the docs' "Components in your own program": the user's program is that very code."""
    return next(block.code for block in code_blocks(COMPONENTS_PAGE) if block.program)


# A program the real engine can run offline: files managed by a dynamic provider, and one component
# whose type and inputs are a Pod's, for the bundled pack's no-latest-image-tag policy to judge.
ENGINE_PROGRAM = """\
from pathlib import Path

import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class FileProvider(ResourceProvider):
    def create(self, props):
        Path(props["path"]).write_text(props["content"])
        return CreateResult(id_=props["path"], outs=dict(props))


class File(Resource):
    def __init__(self, name, path, content):
        super().__init__(FileProvider(), name, {"path": path, "content": content})


config = pulumi.Config()
File("note", str(Path(config.require("directory")) / "note"), "hello")
image = config.get("image")
if image:
    pulumi.ComponentResource(
        "kubernetes:core/v1:Pod",
        "web",
        {"spec": {"containers": [{"name": "web", "image": image}]}},
    )
"""

SNIPPET = """\
from gitops_infra import DeployKey, DeployKeyArgs, StackConfig, __version__
from gitops_infra.automation import UpResult, up
from gitops_infra.policy import POLICY_PACK, pack_dir

args: DeployKeyArgs = DeployKeyArgs(repository="fleet")
key_type: type[DeployKey] = DeployKey
version: str = __version__


def deploy() -> int:
    result: UpResult = up("dev", policy_packs=[POLICY_PACK])
    return result.version


directory: str = str(pack_dir())
config_type: type[StackConfig] = StackConfig
"""


def _run(args: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a command to its end; on a hang, stop it and everything it started, and fail."""
    with subprocess.Popen(
        args,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # plugins it started hold its pipes open too
            stdout, stderr = process.communicate()
            pytest.fail(f"{' '.join(args)} did not finish in {TIMEOUT}s:\n{stdout}\n{stderr}")
    assert process.returncode == 0, f"{' '.join(args)} exited {process.returncode}:\n{stdout}\n{stderr}"
    return stdout


@dataclass(frozen=True)
class Installed:
    """The virtualenv gitops-infra was installed into, and the environment to run it with."""

    venv: Path
    env: dict[str, str]

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def cli(self, *args: str, cwd: Path) -> str:
        return _run([str(self.venv / "bin" / "gitops-infra"), *args], cwd=cwd, env=self.env)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, as ``python -m build`` makes them (the wheel from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO_ROOT)])
    return out


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    home = tmp_path_factory.mktemp("user")
    venv = home / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    wheel = str(next(dist.glob("*.whl")))
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    _run([*pip, "download", "--quiet", "--dest", str(WHEELHOUSE), "--find-links", str(WHEELHOUSE), wheel])
    # No bytecode at install (it would compile every provider SDK module): the user's runs write it.
    _run([*pip, "install", "--quiet", "--no-index", "--find-links", str(WHEELHOUSE), "--no-compile", wheel])
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PULUMI_", "PYTHON", "VIRTUAL_ENV")) and key != "PATH"
    }
    engine_path = [str(ENGINE.bin_dir)] if ENGINE is not None else []
    env |= {
        "PATH": os.pathsep.join([str(venv / "bin"), *engine_path, os.environ.get("PATH", "")]),
        "XDG_CACHE_HOME": str(home / "cache"),
        "HOME": str(home),
    }
    yield Installed(venv=venv, env=env)


def test_the_sdist_and_the_wheel_carry_what_the_package_reads_at_run_time(dist: Path) -> None:
    wheel = next(dist.glob("*.whl"))
    sdist = next(dist.glob("*.tar.gz"))
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for name in RUNTIME_FILES:
        assert name in in_wheel, name
        assert name in in_sdist, name
    assert not [name for name in in_wheel if name.startswith(("tests/", "bench/", "stacks/"))]
    _run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)])


def test_the_version_comes_from_the_package_metadata(installed: Installed, tmp_path: Path) -> None:
    version = _run(
        [installed.python, "-c", "import gitops_infra; print(gitops_infra.__version__)"],
        cwd=tmp_path,
        env=installed.env,
    ).strip()
    metadata = _run(
        [installed.python, "-c", "import importlib.metadata as m; print(m.version('gitops-infra'))"],
        cwd=tmp_path,
        env=installed.env,
    ).strip()
    assert version == metadata and version[0].isdigit()
    assert installed.cli("--version", cwd=tmp_path).strip() == f"gitops-infra, version {version}"
    located = _run(
        [installed.python, "-c", "import gitops_infra; print(gitops_infra.__file__)"],
        cwd=tmp_path,
        env=installed.env,
    )
    assert Path(located).resolve().is_relative_to(installed.venv.resolve())


def _user_project(
    root: Path, program: str, name: str, config: dict[str, object], *, virtualenv: Path | None = None
) -> Path:
    write_project(root, name, virtualenv=virtualenv)
    (root / "__main__.py").write_text(program)
    (root / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    return root


def test_the_offline_plan_of_a_users_own_program(installed: Installed, tmp_path: Path) -> None:
    project = _user_project(
        tmp_path / "platform",
        _docs_program(),
        "platform",
        {"platform:kubeconfig": {"secure": "v1:bm90LWEtcmVhbC1jaXBoZXJ0ZXh0"}, "github:owner": "acme"},
    )
    plan = json.loads(installed.cli("plan", "dev", "--json", cwd=project))

    types = {resource["type"] for resource in plan["resources"]}
    assert {
        "gitops-infra:index:DeployKey",
        "gitops-infra:index:FluxBootstrap",
        "tls:index/privateKey:PrivateKey",
        "github:index/repositoryDeployKey:RepositoryDeployKey",
        "kubernetes:core/v1:Namespace",
        "kubernetes:helm.sh/v3:Release",
    } <= types
    assert plan["placeholders"] == ["platform:kubeconfig"]
    assert "v1:bm90" not in json.dumps(plan)


def test_the_wheel_alone_brings_what_the_sealing_keys_need(installed: Installed, tmp_path: Path) -> None:
    # cryptography is a dependency of the wheel itself since a stack's program checks the Sealed Secrets
    # key pairs its config holds, and `sealed-secrets keygen` makes them (the local extra's other use, the
    # message naming the extra when it is missing, is a unit test: tests/unit/test_local.py).
    done = subprocess.run(
        [installed.python, "-c", "from gitops_infra.automation import new_sealing_key_pair as n; n()"],
        cwd=tmp_path,
        env=installed.env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def test_the_bundled_policy_pack_is_set_up_for_the_installed_environment(
    installed: Installed, tmp_path: Path
) -> None:
    first = Path(installed.cli("policy", "path", cwd=tmp_path).strip())
    assert first == Path(installed.cli("policy", "path", cwd=tmp_path).strip()), "made once, then reused"
    assert first.is_relative_to(Path(installed.env["XDG_CACHE_HOME"]))
    settings = yaml.safe_load((first / "PulumiPolicy.yaml").read_text())
    assert settings["runtime"] == {"name": "python", "options": {"virtualenv": str(installed.venv)}}
    assert (first / "__main__.py").is_file()
    assert not list(first.parent.glob(".staging-*"))


@pytest.fixture
def engine_project(installed: Installed, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    if ENGINE is None:
        unavailable(NO_ENGINE)
    project = _user_project(
        tmp_path / "files",
        ENGINE_PROGRAM,
        "files",
        {"files:directory": str(tmp_path)},
        virtualenv=installed.venv,
    )
    env = installed.env | engine_env(tmp_path)
    _run(["pulumi", "stack", "init", "dev", "--non-interactive"], cwd=project, env=env)
    return project, env


PREVIEW_WITH_THE_PACK = """\
import json, sys
from pathlib import Path
from gitops_infra.automation import StackOptions, preview
from gitops_infra.errors import PolicyViolationError
from gitops_infra.policy import POLICY_PACK

try:
    result = preview("dev", options=StackOptions(work_dir=Path(sys.argv[1])), policy_packs=[POLICY_PACK])
    print(json.dumps({"changes": dict(result.changes)}))
except PolicyViolationError as exc:
    print(json.dumps({"violations": [[v.pack, v.policy, v.level, v.urn] for v in exc.violations]}))
"""


def test_preview_enforces_the_bundled_pack_from_the_installed_package(
    installed: Installed, engine_project: tuple[Path, dict[str, str]]
) -> None:
    project, env = engine_project
    script = [installed.python, "-c", PREVIEW_WITH_THE_PACK, str(project)]

    # Nothing here is a resource the pack is about: the pack runs, and the preview passes.
    assert json.loads(_run(script, cwd=project, env=env)) == {"changes": {"create": 2}}

    _run(["pulumi", "config", "set", "image", "nginx:latest", "--stack", "dev"], cwd=project, env=env)
    found = json.loads(_run(script, cwd=project, env=env))
    assert found == {
        "violations": [
            [
                "gitops-infra",
                "no-latest-image-tag",
                "mandatory",
                "urn:pulumi:dev::files::kubernetes:core/v1:Pod::web",
            ]
        ]
    }


def test_the_raw_cli_takes_the_pack_from_a_plain_shell(
    installed: Installed, engine_project: tuple[Path, dict[str, str]]
) -> None:
    project, env = engine_project
    _run(["pulumi", "config", "set", "image", "nginx:1.27.3", "--stack", "dev"], cwd=project, env=env)
    shell = 'pulumi preview --stack dev --non-interactive --policy-pack "$(gitops-infra policy path)"'
    output = _run(["bash", "-c", shell], cwd=project, env=env)
    assert "gitops-infra@v" in output  # the engine names each pack it ran: <name>@v<version>


def test_mypy_strict_checks_a_users_code_against_the_installed_wheel(
    installed: Installed, tmp_path: Path
) -> None:
    (tmp_path / "snippet.py").write_text(SNIPPET)
    # Our mypy, reading the installed package (its py.typed) from the virtualenv, with no config of
    # ours: no ignore_missing_imports for gitops_infra, or for anything else.
    (tmp_path / "mypy.ini").write_text("[mypy]\nstrict = True\n")
    output = _run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            "mypy.ini",
            "--python-executable",
            installed.python,
            "--cache-dir",
            str(MYPY_CACHE),
            "snippet.py",
        ],
        cwd=tmp_path,
    )
    assert output.startswith("Success: no issues found in 1 source file"), output
