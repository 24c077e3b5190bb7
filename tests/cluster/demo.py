"""``make demo``: the whole loop on your laptop, on the cluster tests' harness. ``make demo-down`` stops it.

    python -m tests.cluster.demo up     # start the local cluster and fleet server, `gitops-infra up local`
    python -m tests.cluster.demo down   # stop exactly what `up` started, and remove .demo/

``up`` starts the local cluster (etcd, kube-apiserver, kube-controller-manager, Flux's CRDs and two
controllers) and an SSH fleet repository whose ``clusters/local/`` holds a ConfigMap, all under
``.demo/`` (git-ignored). It runs the committed local stack from a copy in ``.demo/project``, where it
writes what exists only while the demo runs (the fleet server's URL and host key, and the two secrets),
then waits for Flux, prints what Flux applied, edits the ``environment`` ConfigMap out of band and shows
``gitops-infra drift local``. The cluster keeps running: the last lines say how to reach it and stop it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import psutil
import yaml
from kubernetes import client

from .local_cluster import REPO_ROOT, DeployKeyPair, FleetServer, LocalCluster

DEMO = REPO_ROOT / ".demo"
PIDS = DEMO / "processes.json"
SHELL_ENV = DEMO / "env"
DEMO_PASSPHRASE = "demo"
TOOL_DIRS = [str(REPO_ROOT / ".tools/cluster/bin"), str(REPO_ROOT / ".tools/pulumi/bin")]
STACK = "local"
WORKLOAD = """apiVersion: v1
kind: ConfigMap
metadata:
  name: hello-from-git
  namespace: default
data:
  greeting: Flux applied this from the fleet repository
  host: shop.${baseDomain}  # from the environment contract (postBuild.substituteFrom)
"""


def _say(message: str) -> None:
    print(f"demo: {message}", flush=True)


def _gitops_infra(*args: str, env: dict[str, str], check: bool = True) -> int:
    command = [sys.executable, "-m", "gitops_infra.cli", *args, "--cwd", str(DEMO / "project")]
    return subprocess.run(command, env=env, check=check).returncode


def _record(parts: list[LocalCluster | FleetServer]) -> None:
    """Every process the demo started, by pid and start time, for `down` to stop exactly those."""
    processes = [
        {"name": p.name, "pid": p.popen.pid, "started": psutil.Process(p.popen.pid).create_time()}
        for part in parts
        for p in part.processes.running
    ]
    PIDS.write_text(json.dumps(processes, indent=2))


def _project(cluster: LocalCluster, fleet: FleetServer, key: DeployKeyPair, env: dict[str, str]) -> None:
    from pulumi import automation as auto

    project = DEMO / "project"
    project.mkdir()
    (project / "Pulumi.yaml").write_text(
        f"name: gitops-infra\nruntime:\n  name: python\n  options:\n    virtualenv: {sys.prefix}\n"
        f"main: {REPO_ROOT / 'stacks'}\n"
    )
    shutil.copy(REPO_ROOT / "Pulumi.local.yaml", project / "Pulumi.local.yaml")
    # The engine setup built, else the one on PATH (setup builds none when a recent enough one is there).
    built = REPO_ROOT / ".tools/pulumi"
    engine = auto.PulumiCommand(root=str(built)) if (built / "bin/pulumi").exists() else auto.PulumiCommand()
    workspace = auto.LocalWorkspace(work_dir=str(project), env_vars=env, pulumi_command=engine)
    stack = auto.Stack.create(STACK, workspace)
    settings = {
        "gitops-infra:git.url": auto.ConfigValue(fleet.url),
        "gitops-infra:git.knownHosts": auto.ConfigValue(fleet.known_hosts),
        "gitops-infra:localKubeconfig": auto.ConfigValue(cluster.kubeconfig, secret=True),
        "gitops-infra:localDeployKey": auto.ConfigValue(key.private_key, secret=True),
    }
    stack.set_all_config(settings, path=True)


def up() -> None:
    if PIDS.exists():
        sys.exit("demo: already running (make demo-down stops it)")
    shutil.rmtree(DEMO, ignore_errors=True)
    DEMO.mkdir()
    env = {
        **os.environ,
        "PULUMI_BACKEND_URL": (DEMO / "state").as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": os.environ.get("PULUMI_CONFIG_PASSPHRASE", DEMO_PASSPHRASE),
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PATH": os.pathsep.join([*TOOL_DIRS, os.environ["PATH"]]),
    }
    (DEMO / "state").mkdir()
    key = DeployKeyPair.generate()
    started = time.monotonic()
    cluster = LocalCluster(DEMO / "cluster")
    fleet = FleetServer(DEMO / "fleet", key)
    parts: list[LocalCluster | FleetServer] = []
    try:
        for part in (cluster, fleet):
            part.start()
            parts.append(part)
        _record(parts)
    except BaseException:
        for part in reversed(parts):
            part.stop()
        raise
    _say(f"local cluster and fleet server up in {time.monotonic() - started:.1f} s ({cluster.server})")
    try:
        _walkthrough(cluster, fleet, key, env)
    except (Exception, KeyboardInterrupt) as exc:
        # The processes are recorded, so the cluster stays inspectable and `down` still stops them.
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else f"{type(exc).__name__}: {exc}"
        sys.exit(f"demo: stopped early ({reason}); the cluster is still up, `make demo-down` stops it")


def _walkthrough(cluster: LocalCluster, fleet: FleetServer, key: DeployKeyPair, env: dict[str, str]) -> None:
    """Up, Flux sync, what Flux applied, then drift after an out-of-band edit."""
    fleet.commit({"clusters/local/hello.yaml": WORKLOAD}, "a first workload")
    _project(cluster, fleet, key, env)

    _say("gitops-infra up local  (it returns once Flux reports Ready)")
    _gitops_infra("up", STACK, "--yes", env=env)
    _wait_for_flux(cluster)
    _say("what Flux applied from clusters/local:")
    core = client.CoreV1Api(cluster.api())
    applied = core.read_namespaced_config_map("hello-from-git", "default")
    print(yaml.safe_dump({"metadata": {"name": applied.metadata.name}, "data": applied.data}))

    _say("editing the environment ConfigMap out of band, then: gitops-infra drift local")
    core.patch_namespaced_config_map("environment", "apps", {"data": {"baseDomain": "edited.example.com"}})
    code = _gitops_infra("drift", STACK, env=env, check=False)
    _say(f"drift exited {code} (2: drift found)")
    _write_shell_env(cluster, env)
    print()
    print(f"source {SHELL_ENV.relative_to(REPO_ROOT)}   # KUBECONFIG, the demo's state backend and engine")
    print(f"gitops-infra up {STACK} --refresh --yes --cwd .demo/project   # restores the edited ConfigMap")
    print("make demo-down   # stops the local cluster and the fleet server, and removes .demo/")


def _write_shell_env(cluster: LocalCluster, env: dict[str, str]) -> None:
    """Exports that let the user's own shell drive the demo stack the way the demo did."""
    exports = {
        "KUBECONFIG": str(cluster.kubeconfig_path),
        "PULUMI_BACKEND_URL": env["PULUMI_BACKEND_URL"],
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        # The engine and the locally built kubernetes provider, exactly as the demo ran them.
        "PATH": os.pathsep.join([str(REPO_ROOT / ".venv/bin"), *TOOL_DIRS, "$PATH"]),
    }
    if "PULUMI_CONFIG_PASSPHRASE" not in os.environ:
        # Only the demo's own throwaway passphrase is written down; a user's stays in their environment.
        exports["PULUMI_CONFIG_PASSPHRASE"] = DEMO_PASSPHRASE
    SHELL_ENV.write_text("".join(f'export {name}="{value}"\n' for name, value in exports.items()))


def _wait_for_flux(cluster: LocalCluster, timeout: float = 120.0) -> None:
    api = client.CustomObjectsApi(cluster.api())
    deadline = time.monotonic() + timeout
    for group, plural in (
        ("source.toolkit.fluxcd.io", "gitrepositories"),
        ("kustomize.toolkit.fluxcd.io", "kustomizations"),
    ):
        while True:
            found = api.get_namespaced_custom_object(group, "v1", "flux-system", plural, "flux-system")
            ready = [c for c in found.get("status", {}).get("conditions", []) if c["type"] == "Ready"]
            if ready and ready[0]["status"] == "True":
                _say(f"{found['kind']} flux-system Ready: {ready[0]['message']}")
                break
            if time.monotonic() > deadline:
                sys.exit(f"demo: {found['kind']} flux-system not Ready after {timeout:.0f} s: {ready}")
            time.sleep(0.5)


def down() -> None:
    if not PIDS.exists():
        _say("nothing running")
        shutil.rmtree(DEMO, ignore_errors=True)
        return
    processes = json.loads(PIDS.read_text())
    for entry in reversed(processes):
        with contextlib.suppress(psutil.NoSuchProcess):
            process = psutil.Process(entry["pid"])
            if abs(process.create_time() - entry["started"]) > 1:
                continue  # the pid was reused: not ours
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except psutil.TimeoutExpired:
                process.kill()
            _say(f"stopped {entry['name']} (pid {entry['pid']})")
    shutil.rmtree(DEMO, ignore_errors=True)
    _say("removed .demo/")


if __name__ == "__main__":
    {"up": up, "down": down}[sys.argv[1] if len(sys.argv) > 1 else "up"]()
