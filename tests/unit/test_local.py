"""``gitops_infra.local`` without a cluster: it imports light, names its extra when that is missing, and
the demo says what to build before it starts anything."""

from __future__ import annotations

import base64
import datetime
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gitops_infra.local import Toolchain
from gitops_infra.local import demo as local_demo

# What the `local` extra brings; `None` in sys.modules makes Python treat a package as not installed.
WITHOUT_THE_EXTRA = "import sys\nsys.modules['cryptography'] = None\n"


def _python(code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False, cwd=cwd
    )


def test_importing_the_package_loads_neither_the_extra_nor_the_harness() -> None:
    code = "import sys, json, gitops_infra.local\nprint(json.dumps(sorted(sys.modules)))"
    modules = json.loads(_python(code).stdout)
    assert "gitops_infra.local" in modules
    heavy = ("kubernetes", "cryptography", "pulumi")
    harness = ("_cluster", "_pki", "_fleet_server", "_github", "_nodes", "_processes")
    harness_modules = {f"gitops_infra.local.{name}" for name in harness}
    assert [m for m in modules if m.split(".")[0] in heavy or m in harness_modules] == []


def test_without_the_extra_the_harness_names_it() -> None:
    code = (
        WITHOUT_THE_EXTRA + "from gitops_infra.errors import MissingExtraError\n"
        "try:\n"
        "    from gitops_infra.local import LocalCluster\n"
        "except MissingExtraError as exc:\n"
        "    print(exc.extra, isinstance(exc, ImportError), exc)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("local True gitops_infra.local needs cryptography,")
    assert "pip install 'gitops-infra[local]'" in done.stdout


def test_without_the_extra_the_demo_says_so_without_a_traceback(tmp_path: Path) -> None:
    code = (
        WITHOUT_THE_EXTRA
        + "import sys\nfrom gitops_infra.cli import main\nsys.argv[1:] = ['local', 'up']\nmain()\n"
    )
    done = _python(code, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("MissingExtraError: gitops_infra.local needs cryptography,")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".demo").exists()


def test_the_toolchain_is_found_from_a_project_directory(tmp_path: Path) -> None:
    (tmp_path / ".tools" / "cluster" / "bin").mkdir(parents=True)
    inside = tmp_path / "stacks" / "deeper"
    inside.mkdir(parents=True)

    found = Toolchain.find(inside)

    assert found == Toolchain.of(tmp_path)
    assert found.bin_dir == tmp_path.resolve() / ".tools" / "cluster" / "bin"
    assert found.engine is None  # setup built no engine here: the one on PATH is used
    assert str(found.bin_dir / "kube-apiserver") in found.missing()
    with pytest.raises(FileNotFoundError, match=r"kube-apiserver is missing: run `make setup`"):
        found.binary("kube-apiserver")


def test_the_demo_asks_for_make_setup_before_starting_anything(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.local.yaml").write_text("config: {}\n")
    (tmp_path / "stacks").mkdir()

    with pytest.raises(SystemExit, match=r"^demo: .*etcd.* missing: run `make setup`"):
        local_demo.up(tmp_path)
    assert not (tmp_path / ".demo").exists()


def test_the_demo_runs_only_in_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"has no Pulumi\.local\.yaml: run the demo from a gitops-infra"):
        local_demo.up(tmp_path)


def test_down_with_nothing_running_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    local_demo.down(tmp_path)
    assert capsys.readouterr().out == "demo: nothing running\n"


# -- the loopback GitHub's check of an App's JWT -------------------------------------------------------


def _jwt(app: Any, claims: dict[str, Any], *, key: str | None = None) -> str:
    """A JWT as fluxcd/pkg/auth makes one: RS256, signed with the App's key (or ``key``)."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    def encoded(document: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")

    signing_input = f"{encoded({'alg': 'RS256', 'typ': 'JWT'})}.{encoded(claims)}"
    private = serialization.load_pem_private_key((key or app.private_key).encode(), password=None)
    assert isinstance(private, rsa.RSAPrivateKey)
    signature = private.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{base64.urlsafe_b64encode(signature).decode().rstrip('=')}"


def test_the_loopback_github_takes_only_a_current_jwt_the_apps_key_signed() -> None:
    from gitops_infra.local import GitHubApp
    from gitops_infra.local._github import jwt_problem

    app = GitHubApp.generate(app_id=42)
    now = datetime.datetime.now(datetime.UTC)
    at = int(now.timestamp())
    good = {"iss": "42", "iat": at - 30, "exp": at + 90}
    assert jwt_problem(_jwt(app, good), app, now) is None
    other = GitHubApp.generate(app_id=42)
    assert (
        jwt_problem(_jwt(app, good, key=other.private_key), app, now)
        == "A JSON web token could not be decoded"
    )
    assert jwt_problem("not.a.jwt", app, now) == "A JSON web token could not be decoded"
    assert "Issuer" in str(jwt_problem(_jwt(app, {**good, "iss": "43"}), app, now))
    assert "Expiration" in str(jwt_problem(_jwt(app, {**good, "exp": at - 1}), app, now))
    assert "Expiration" in str(jwt_problem(_jwt(app, {**good, "exp": at + 3600}), app, now))


# -- the demo's record of its processes ------------------------------------------------------------------


@pytest.fixture
def demo_processes(tmp_path: Path) -> Iterator[Callable[..., list[Any]]]:
    """Start processes as the demo starts its own (``Processes``, each logging under ``tmp_path/.demo/``),
    each a `sleep` that would outlive the test by far; any still running are killed afterwards."""
    from gitops_infra.local._processes import Processes

    started = Processes(tmp_path / ".demo" / "cluster" / "logs")

    def start(*names: str) -> list[Any]:
        started.log_dir.mkdir(parents=True, exist_ok=True)
        return [started.start(name, ["sleep", "300"]) for name in names]

    try:
        yield start
    finally:
        for process in started.running:
            process.popen.kill()
            process.popen.wait()


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _entry(process: Any) -> dict[str, Any]:
    import psutil

    return {
        "name": process.name,
        "pid": process.popen.pid,
        "started": psutil.Process(process.popen.pid).create_time(),
    }


DAMAGED_RECORDS = {
    "cut short": lambda etcd: json.dumps([etcd])[:-7],
    "empty": lambda etcd: "",
    "an object, not a list": lambda etcd: json.dumps({"etcd": etcd}),
    "an entry's pid a string": lambda etcd: json.dumps([etcd, {**etcd, "pid": str(etcd["pid"])}]),
    "an entry missing its start": lambda etcd: json.dumps([{"name": "etcd", "pid": etcd["pid"]}]),
    "not text": lambda etcd: b"\xff\xfe\x00garbage",
    "a directory in its place": None,
}


@pytest.mark.parametrize("damage", list(DAMAGED_RECORDS))
def test_down_with_a_damaged_record_says_so_and_stops_every_process_of_the_demo(
    damage: str, tmp_path: Path, demo_processes: Callable[..., list[Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    # It was a traceback (json.loads, a KeyError, iterating a dict), every process left running, and
    # `local up` then refused ("already running") until .demo/ was removed by hand.
    etcd, apiserver, sshd = demo_processes("etcd", "kube-apiserver", "sshd")
    record = tmp_path / ".demo" / "processes.json"
    make = DAMAGED_RECORDS[damage]
    if make is None:
        record.mkdir()
    else:
        content = make(_entry(etcd))
        record.write_bytes(content if isinstance(content, bytes) else content.encode())

    local_demo.down(tmp_path)

    out = capsys.readouterr().out
    assert out.startswith("demo: .demo/processes.json is damaged ("), out
    assert "stopping the processes whose output goes to .demo/" in out.splitlines()[0]
    assert "Traceback" not in out
    for process in (etcd, apiserver, sshd):
        assert not _alive(process.popen.pid), f"{process.name} still runs"
        assert f"stopped {process.name} (pid {process.popen.pid})" in out
    assert not (tmp_path / ".demo").exists()
    # The second act: the demo starts again (here it goes on to ask for its checkout's files).
    with pytest.raises(SystemExit, match=r"has no Pulumi\.local\.yaml"):
        local_demo.up(tmp_path)


def test_down_stops_no_process_a_reused_pid_names(
    tmp_path: Path, demo_processes: Callable[..., list[Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    (etcd,) = demo_processes("etcd")
    other = subprocess.Popen(["sleep", "300"], stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        stranger = {"name": "kube-apiserver", "pid": other.pid, "started": 1.0}  # not when it started
        (tmp_path / ".demo" / "processes.json").write_text(json.dumps([_entry(etcd), stranger]))

        local_demo.down(tmp_path)

        assert _alive(other.pid), "a process the demo did not start was stopped"
        assert not _alive(etcd.popen.pid)
        assert capsys.readouterr().out.splitlines() == [
            f"demo: stopped etcd (pid {etcd.popen.pid})",
            "demo: removed .demo/",
        ]
    finally:
        other.kill()
        other.wait()


def test_up_refuses_while_a_process_of_the_demo_runs_even_one_its_record_lost(
    tmp_path: Path, demo_processes: Callable[..., list[Any]]
) -> None:
    (etcd,) = demo_processes("etcd")
    (tmp_path / ".demo" / "processes.json").write_text("[")
    with pytest.raises(SystemExit, match=rf"^demo: already running: etcd \(pid {etcd.popen.pid}\)"):
        local_demo.up(tmp_path)
    assert _alive(etcd.popen.pid) and (tmp_path / ".demo" / "processes.json").exists()


def test_up_after_a_damaged_record_with_nothing_running_says_so_and_starts_afresh(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".demo").mkdir()
    (tmp_path / ".demo" / "processes.json").write_text('[{"name": "etcd", "pid": 1')

    with pytest.raises(SystemExit, match=r"has no Pulumi\.local\.yaml"):
        local_demo.up(tmp_path)
    assert capsys.readouterr().out.startswith("demo: .demo/processes.json is damaged (is not JSON (Expecting")


def _secret_config_values(source: str) -> list[int]:
    """The lines of ``source`` that make a ``ConfigValue(..., secret=<anything but False>)``."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            secret = [k.value for k in node.keywords if k.arg == "secret"]
            if (
                name == "ConfigValue"
                and secret
                and not (isinstance(secret[0], ast.Constant) and secret[0].value is False)
            ):
                found.append(node.lineno)
    return found


def test_the_package_hands_the_engine_no_secret_config_value_as_an_argument() -> None:
    # pulumi.automation sets a ConfigValue as an argument of `pulumi config set[-all] --secret`, which
    # `ps` shows while it runs: the demo put the cluster's admin kubeconfig and the deploy key there.
    # Secrets go through `set_secrets`, on the engine's stdin (the engine test watches its command lines).
    package = Path(local_demo.__file__).resolve().parents[1]
    found = {
        f"{path.relative_to(package)}:{line}"
        for path in package.rglob("*.py")
        for line in _secret_config_values(path.read_text())
    }
    assert found == set()
    # The rule sees what it forbids.
    assert _secret_config_values("auto.ConfigValue(key, secret=True)\nConfigValue(v, secret=s)\n") == [1, 2]
    assert _secret_config_values("auto.ConfigValue(url)\nConfigValue(v, secret=False)\n") == []
