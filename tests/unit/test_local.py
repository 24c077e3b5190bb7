"""``gitops_infra.local`` without a cluster: it imports light, names its extra when that is missing, and
the demo says what to build before it starts anything."""

from __future__ import annotations

import base64
import datetime
import json
import subprocess
import sys
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
    assert [m for m in modules if m.split(".")[0] in heavy or m == "gitops_infra.local._cluster"] == []


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
