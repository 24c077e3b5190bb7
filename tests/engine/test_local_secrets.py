"""The local harness sets its secrets (the cluster's admin kubeconfig, the deploy key) on the real engine
without putting them on any process's command line, which ``ps`` shows every user of the machine.

The engine is this checkout's, behind a recorder of the command line of every run of it: each engine
process the demo starts is seen, however short-lived, where sampling ``ps`` would miss most.
"""

from __future__ import annotations

import base64
import json
import shlex
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from gitops_infra.local import DeployKeyPair
from gitops_infra.local import demo as local_demo

from .. import support
from ..support import REPO_ROOT, STACKS, Engine, secret_leaks_in_files, secret_leaks_in_texts

pytestmark = pytest.mark.engine


def _kubeconfig() -> tuple[str, str]:
    """An admin kubeconfig as the local cluster writes one (JSON, its client key inline); and that key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key_data = base64.b64encode(key).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "local", "cluster": {"server": "https://127.0.0.1:6443"}}],
        "users": [{"name": "admin", "user": {"client-certificate-data": "", "client-key-data": key_data}}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": "admin"}}],
        "current-context": "local",
    }
    return json.dumps(config, indent=2), key_data


def test_the_demo_sets_its_secrets_on_no_engine_command_line(engine: Engine, tmp_path: Path) -> None:
    # `pulumi config set-all --secret gitops-infra:localKubeconfig=<the kubeconfig> --secret ...` ran for
    # as long as the engine took, readable by anyone on the machine.
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(REPO_ROOT / "Pulumi.local.yaml", checkout / "Pulumi.local.yaml")
    (checkout / "stacks").symlink_to(STACKS)
    # Where setup builds the engine into a checkout, the real one behind the recorder.
    argv_log = tmp_path / "argv.log"
    recorder = checkout / ".tools" / "pulumi" / "bin" / "pulumi"
    recorder.parent.mkdir(parents=True)
    recorder.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\n' \"pulumi $*\" >> {shlex.quote(str(argv_log))}\n"
        f'exec {shlex.quote(str(engine.pulumi))} "$@"\n'
    )
    recorder.chmod(0o755)
    demo = local_demo._Demo.of(checkout)
    env = {**support.engine_env(tmp_path), "PATH": f"{engine.bin_dir}:/usr/bin:/bin"}
    kubeconfig, key_data = _kubeconfig()
    deploy_key = DeployKeyPair.generate()
    cluster = SimpleNamespace(kubeconfig=kubeconfig)
    fleet = SimpleNamespace(
        url="ssh://git@127.0.0.1:2222/fleet.git", known_hosts="[127.0.0.1]:2222 ssh-ed25519 AAAA"
    )

    local_demo._project(demo, cluster, fleet, deploy_key, env)  # type: ignore[arg-type]

    command_lines = argv_log.read_text()
    assert "config set" in command_lines, "the recorder saw no engine set config: it could not fail"
    secrets = [kubeconfig, key_data, deploy_key.private_key]
    assert secret_leaks_in_texts({"an engine's command line": command_lines}, secrets) == []
    # Set as they are, to the byte (a PEM key keeps its last newline), and as secrets.
    config = support.workspace(demo.project, env).get_all_config("local")
    assert config["gitops-infra:localKubeconfig"].value == kubeconfig
    assert config["gitops-infra:localDeployKey"].value == deploy_key.private_key
    assert deploy_key.private_key.endswith("\n")
    assert config["gitops-infra:localKubeconfig"].secret and config["gitops-infra:localDeployKey"].secret
    assert json.loads(config["gitops-infra:git"].value)["url"] == fleet.url  # the others, as they were
    assert secret_leaks_in_files([demo.project / "Pulumi.local.yaml"], secrets) == []
