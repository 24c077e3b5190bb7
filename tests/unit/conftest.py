"""Shared fixtures: the committed stack configs, and a small valid config to break in tests."""

from __future__ import annotations

import copy
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..support import REPO_ROOT

_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()


def generated_age_key() -> str:
    """An age identity's text, made when the tests run: the repository holds no key material, not even a
    made-up one (a secret scanner cannot tell the two apart)."""
    return "AGE-SECRET-KEY-1" + "".join(secrets.choice(_BECH32) for _ in range(58))


# Not a key, nor shaped like one: where a test needs the SOPS identity only as a secret config value.
SOPS_TEST_KEY = "sops-age-identity-for-tests"
GITHUB_TEST_TOKEN = "ghp_testonly_not_a_real_token"
WEBHOOK_TEST_URL = "https://hooks.example.invalid/testonly"
LOCAL_TEST_KUBECONFIG = '{"apiVersion": "v1", "kind": "Config", "clusters": []}'


def plan_in_a_subprocess(
    project: Path, stack: str = "dev", *, timeout: float
) -> subprocess.CompletedProcess[str]:
    """``gitops-infra plan`` as a process of its own (for signals, and a watchdog that can kill it)."""
    return subprocess.run(
        [sys.executable, "-m", "gitops_infra.cli", "plan", stack, "--cwd", str(project)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def stack_config(stack: str) -> dict[str, Any]:
    """``config:`` of ``Pulumi.<stack>.yaml``, plus the secrets a user would set with ``--secret``."""
    raw: dict[str, Any] = yaml.safe_load((REPO_ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    raw["gitops-infra:githubToken"] = GITHUB_TEST_TOKEN
    raw["gitops-infra:sopsAgeKey"] = SOPS_TEST_KEY
    if "notifications" in raw.get("gitops-infra:flux", {}):
        raw["gitops-infra:notificationWebhook"] = WEBHOOK_TEST_URL
    if stack == "local":  # the secrets `make demo` sets on its copy of the local stack
        raw["gitops-infra:localKubeconfig"] = LOCAL_TEST_KUBECONFIG
        raw["gitops-infra:localDeployKey"] = "mock-openssh-private-key-local"
    return raw


MINIMAL: dict[str, Any] = {
    "environment": {"name": "test", "baseDomain": "test.example.com", "serviceNamespace": "apps"},
    "cluster": {
        "kubernetesVersion": "1.33",
        "network": {"vpc": {"cidr": "10.0.0.0/16", "availabilityZones": ["eu-west-1a", "eu-west-1b"]}},
        "nodeGroups": [{"name": "system", "instanceTypes": ["t3.large"], "minSize": 2, "maxSize": 3}],
    },
    "git": {"owner": "acme", "repository": "fleet"},
    "flux": {},
    "tags": {"owner": "platform"},
}


@pytest.fixture
def minimal() -> dict[str, Any]:
    """A deep copy of a minimal valid config, with bare (unprefixed) keys."""
    return copy.deepcopy(MINIMAL)
