"""A destroy that fails is still swept, and the CLI shows what the sweep found (issue 43, item 5).

The stack is the fixture project's, with an EKS cluster in its state as ``pulumi stack import`` takes one:
the cluster depends on file ``a``, as a cluster on its VPC, and is deleted by the fixture's own dynamic
provider (no AWS plugin runs offline). The destroy then fails for real, after the cluster is gone: ``a``
is a directory by then, which the provider cannot unlink, as AWS refuses a VPC's delete while a
controller's ENI is left in it. What AWS still holds is moto's, in this process, where the sweep runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from click.testing import CliRunner
from moto import mock_aws
from pulumi import automation as auto

from gitops_infra.automation import destroy, up
from gitops_infra.cli import EXIT_ERROR, main
from gitops_infra.errors import OperationFailedError

from .conftest import FixtureRepo

pytestmark = pytest.mark.engine

REGION = "eu-west-1"
ACCOUNT = "123456789012"  # moto's account for the credentials below: the runner's, and the cluster's
CLUSTER = "dev-eks"
CLUSTER_URN = f"urn:pulumi:dev::fixture::aws:eks/cluster:Cluster::{CLUSTER}"
REFUSED = "Is a directory"  # what the provider's delete of `a` fails with, in the engine's message


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Moto, and no AWS setting from this machine: nothing can reach AWS."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    empty = tmp_path / "aws-config"
    empty.write_text("")
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.setenv(name, str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        yield


def _leftovers() -> list[str]:
    """What the cluster's controllers left: the VPC CNI's ENI and the Load Balancer Controller's security
    group, in the VPC whose delete they hold up; and another cluster's ENI. The ARNs of ours, sorted."""
    ec2 = boto3.client("ec2", region_name=REGION)
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/24", AvailabilityZone=f"{REGION}a")["Subnet"]

    def eni(cluster: str) -> str:
        tags = [
            {
                "ResourceType": "network-interface",
                "Tags": [{"Key": "cluster.k8s.amazonaws.com/name", "Value": cluster}],
            }
        ]
        made = ec2.create_network_interface(SubnetId=subnet["SubnetId"], TagSpecifications=tags)
        made_id = made["NetworkInterface"]["NetworkInterfaceId"]
        return f"arn:aws:ec2:{REGION}:{ACCOUNT}:network-interface/{made_id}"

    tags = [{"ResourceType": "security-group", "Tags": [{"Key": "elbv2.k8s.aws/cluster", "Value": CLUSTER}]}]
    group = ec2.create_security_group(
        GroupName="k8s-traffic", Description="x", VpcId=vpc, TagSpecifications=tags
    )
    eni("another-cluster")
    return sorted([eni(CLUSTER), f"arn:aws:ec2:{REGION}:{ACCOUNT}:security-group/{group['GroupId']}"])


def _with_a_cluster(repo: FixtureRepo) -> None:
    """The EKS cluster in the stack's state, depending on file ``a``: the engine deletes it first."""
    stack = repo.raw_stack()
    exported = stack.export_stack()
    deployment: dict[str, Any] = dict(exported.deployment or {})
    resources = [r for r in deployment["resources"] if r["urn"] != CLUSTER_URN]
    file_a = next(r for r in resources if r["urn"].endswith("::a"))
    gone = str(repo.files_dir.parent / "the-cluster")  # never on disk: its delete succeeds
    cluster = {
        **{key: file_a[key] for key in ("custom", "parent", "provider")},
        "urn": CLUSTER_URN,
        "type": "aws:eks/cluster:Cluster",
        "id": gone,
        "inputs": {**file_a["inputs"], "path": gone},
        "outputs": {**file_a["outputs"], "path": gone, "name": CLUSTER},
        "dependencies": [file_a["urn"]],
    }
    cluster["outputs"]["arn"] = f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/{CLUSTER}"
    deployment["resources"] = [*resources, cluster]
    stack.import_stack(auto.Deployment(version=exported.version, deployment=deployment))


def _urns(repo: FixtureRepo) -> list[str]:
    return sorted(r["urn"] for r in (repo.raw_stack().export_stack().deployment or {}).get("resources") or [])


def _failing(repo: FixtureRepo) -> list[str]:
    """The stack up, with its cluster, and file ``a`` made undeletable; the ARNs of the leftovers."""
    up("dev", options=repo.options)
    left = _leftovers()
    _with_a_cluster(repo)
    (repo.files_dir / "a").unlink()
    (repo.files_dir / "a").mkdir()  # the provider cannot delete it: the destroy fails there
    return left


def test_a_failed_destroy_is_swept_and_the_findings_ride_on_the_error(repo: FixtureRepo, aws: None) -> None:
    left = _failing(repo)

    with pytest.raises(OperationFailedError) as failed:
        destroy("dev", options=repo.options)

    assert REFUSED in str(failed.value)
    assert CLUSTER_URN not in _urns(repo)  # the engine ran: the cluster went, then `a` failed
    (swept,) = failed.value.sweeps
    assert (swept.cluster, swept.region, swept.account, swept.error) == (CLUSTER, REGION, ACCOUNT, None)
    assert [o.arn for o in swept.orphans] == left


def test_the_cli_shows_a_failed_destroy_s_sweep_in_text_json_and_markdown(
    repo: FixtureRepo, aws: None
) -> None:
    left = _failing(repo)
    runner = CliRunner(env=repo.env)
    base = ["destroy", "dev", "--yes", "--cwd", str(repo.root)]

    as_json = runner.invoke(main, [*base, "--json"])
    assert as_json.exit_code == EXIT_ERROR, as_json.output
    document = json.loads(as_json.stdout)
    assert document["error"]["type"] == "OperationFailedError" and REFUSED in document["error"]["message"]
    assert document["stack"] == "dev"
    [sweep] = document["sweeps"]
    assert (sweep["cluster"], sweep["account"], sweep["clean"]) == (CLUSTER, ACCOUNT, False)
    assert [o["arn"] for o in sweep["orphans"]] == left

    _with_a_cluster(repo)  # a stack that still has its cluster, as before the first attempt
    text = runner.invoke(main, base)
    assert text.exit_code == EXIT_ERROR, text.output
    found = f"Sweep of cluster {CLUSTER} in {REGION} (account {ACCOUNT}): 2 left behind (not deleted):"
    assert found in text.stdout
    assert all(arn in text.stdout for arn in left)
    assert "OperationFailedError: destroy on stack 'dev' failed" in text.stderr

    _with_a_cluster(repo)
    markdown = runner.invoke(main, [*base, "--format", "markdown"])
    assert markdown.exit_code == EXIT_ERROR, markdown.output
    assert markdown.stdout.startswith("### Destroy of `dev` failed\n")
    assert f"#### Sweep of `{CLUSTER}` in `{REGION}` (account `{ACCOUNT}`): 2 left behind" in markdown.stdout
    assert all(f"`{arn}`" in markdown.stdout for arn in left)
    assert "OperationFailedError: destroy on stack 'dev' failed" in markdown.stderr

    # Once the cluster is gone from the state, a failed destroy has no cluster to sweep, and shows none.
    again = runner.invoke(main, [*base, "--json"])
    assert again.exit_code == EXIT_ERROR and "sweeps" not in json.loads(again.stdout)
