"""The sweep after a destroy (``gitops_infra.automation._cluster.sweep``): what AWS still holds tagged for a
cluster.

The resources are real ones in moto's emulation of EC2, ELB, ELBv2 and the Resource Groups Tagging API,
tagged as each controller tags what it makes. Moto's Tagging API lists security groups, subnets, ENIs,
volumes, snapshots, instances, ELBv2 load balancers and target groups, and classic ELBs; it does not list
launch templates, so Karpenter's leftovers are stood for by a volume (Karpenter tags its instances'
volumes too). The failures are driven through botocore itself: an environment with no credentials, a
profile that is not in the config, and a session whose ``before-call`` handler answers in AWS's place.
Nothing reaches AWS: moto answers every call, the handler answers before a request is signed, and the
environment without credentials points any request that still went out at a closed port on loopback.
"""

from __future__ import annotations

import json
import os
import secrets
import string
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import EndpointConnectionError
from moto import mock_aws

from gitops_infra.automation._cluster.sweep import AssumedRole, sweep
from gitops_infra.automation.results import SweepResult
from gitops_infra.errors import ArgumentError

REGION = "eu-west-1"
ELSEWHERE = "eu-central-1"
OURS = "dev"
OTHER = "dev-2"  # our name is a prefix of it: a match on a prefix would find its resources too
TAGGING = "resource-groups-tagging-api"
RUNNER = "123456789012"  # moto's account for credentials it did not issue: the runner's own
# Made per run, shaped as AWS's are: no key material is kept in the repository, not even a fake one.
ACCESS_KEY = "AKIA" + "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(16))
SECRET_KEY = "".join(secrets.choice(string.ascii_letters + string.digits + "/+") for _ in range(40))


def _isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """No AWS setting from this machine: no keys or profile, empty config files, no instance metadata."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    empty = home / "empty"
    empty.write_text("")
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "BOTO_CONFIG"):
        monkeypatch.setenv(name, str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture(scope="module", autouse=True)
def _moto_warmed() -> None:
    """Moto loads EC2's data files on first use (seconds); pay that once, not in the first test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ACCESS_KEY_ID", "testing")
        patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        with mock_aws():
            boto3.client("ec2", region_name=REGION).describe_vpcs()


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _isolate(monkeypatch, tmp_path)
    # A request that did go out would reach a closed port on this machine, never AWS.
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    _isolate(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        yield


def _tags(resource_type: str, tags: dict[str, str]) -> list[dict[str, Any]]:
    return [{"ResourceType": resource_type, "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]


def _arn(kind: str, resource_id: str, region: str = REGION, account: str = RUNNER) -> str:
    return f"arn:aws:ec2:{region}:{account}:{kind}/{resource_id}"


class Account:
    """Moto's account, with a VPC of two subnets to put things in, and a maker for each thing.

    The runner's own account, unless a ``session`` of another account's credentials is given.
    """

    def __init__(
        self, region: str = REGION, *, session: boto3.session.Session | None = None, account: str = RUNNER
    ) -> None:
        self.region, self.account = region, account
        made = session or boto3.session.Session()
        self.ec2 = made.client("ec2", region_name=region)
        self.elbv2 = made.client("elbv2", region_name=region)
        self.elb = made.client("elb", region_name=region)
        self.vpc = self.ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        self.subnets = [self.subnet(f"10.0.{i}.0/24", zone, {}) for i, zone in enumerate("ab")]

    def subnet(self, cidr: str, zone: str, tags: dict[str, str]) -> str:
        made = self.ec2.create_subnet(
            VpcId=self.vpc,
            CidrBlock=cidr,
            AvailabilityZone=self.region + zone,
            **({"TagSpecifications": _tags("subnet", tags)} if tags else {}),
        )
        return str(made["Subnet"]["SubnetId"])

    def volume(self, tags: dict[str, str]) -> str:
        made = self.ec2.create_volume(
            AvailabilityZone=self.region + "a", Size=1, TagSpecifications=_tags("volume", tags)
        )
        return _arn("volume", made["VolumeId"], self.region, self.account)

    def eni(self, tags: dict[str, str]) -> str:
        made = self.ec2.create_network_interface(
            SubnetId=self.subnets[0], TagSpecifications=_tags("network-interface", tags)
        )
        eni = made["NetworkInterface"]["NetworkInterfaceId"]
        return _arn("network-interface", eni, self.region, self.account)

    def security_group(self, name: str, tags: dict[str, str]) -> str:
        made = self.ec2.create_security_group(
            GroupName=name, Description=name, VpcId=self.vpc, TagSpecifications=_tags("security-group", tags)
        )
        return _arn("security-group", made["GroupId"], self.region, self.account)

    def alb(self, name: str, tags: dict[str, str]) -> str:
        made = self.elbv2.create_load_balancer(
            Name=name, Subnets=self.subnets, Tags=[{"Key": k, "Value": v} for k, v in tags.items()]
        )
        return str(made["LoadBalancers"][0]["LoadBalancerArn"])

    def target_group(self, name: str, tags: dict[str, str]) -> str:
        made = self.elbv2.create_target_group(
            Name=name,
            Protocol="HTTP",
            Port=80,
            VpcId=self.vpc,
            Tags=[{"Key": k, "Value": v} for k, v in tags.items()],
        )
        return str(made["TargetGroups"][0]["TargetGroupArn"])

    def classic_elb(self, name: str, tags: dict[str, str]) -> str:
        self.elb.create_load_balancer(
            LoadBalancerName=name,
            Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 80, "InstancePort": 30080}],
            Subnets=self.subnets[:1],
            Tags=[{"Key": k, "Value": v} for k, v in tags.items()],
        )
        return f"arn:aws:elasticloadbalancing:{self.region}:{self.account}:loadbalancer/{name}"


def _csi_volume(cluster: str) -> dict[str, str]:
    """The tags the EBS CSI driver writes with --k8s-tag-cluster-id (pkg/driver/controller.go)."""
    return {
        "CSIVolumeName": f"pvc-{cluster}",
        "ebs.csi.aws.com/cluster": "true",
        f"kubernetes.io/cluster/{cluster}": "owned",
        "KubernetesCluster": cluster,
        "ebs.csi.aws.com/cluster-name": cluster,
        "Name": f"{cluster}-dynamic-pvc-{cluster}",
    }


def _decoys(account: Account) -> None:
    """What must not be reported for OURS: another cluster's leftovers, and what is not the cluster's."""
    account.alb("k8s-other-web", {"elbv2.k8s.aws/cluster": OTHER})
    account.target_group("k8s-other-tg", {"elbv2.k8s.aws/cluster": OTHER})
    account.security_group("k8s-other-sg", {"elbv2.k8s.aws/cluster": OTHER})
    account.volume(_csi_volume(OTHER))
    account.eni({"cluster.k8s.amazonaws.com/name": OTHER})
    account.volume({"eks:eks-cluster-name": OTHER, f"kubernetes.io/cluster/{OTHER}": "owned"})
    account.classic_elb("other-elb", {f"kubernetes.io/cluster/{OTHER}": "owned"})
    # A subnet of the user's own VPC, tagged so the cluster finds it: it outlives the cluster by design.
    account.subnet("10.0.10.0/24", "a", {f"kubernetes.io/cluster/{OURS}": "shared"})
    # The driver's tag alone is on every driver's volumes: nothing ties this one to our cluster.
    account.volume({"ebs.csi.aws.com/cluster": "true", "CSIVolumeName": "pvc-unknown"})
    # A volume someone tagged with our name, which the driver did not make.
    account.volume({"KubernetesCluster": OURS})
    # A load balancer the user made: its own tags, none of a controller.
    account.alb("hand-made", {"team": "web"})


def _check(result: SweepResult) -> dict[str, tuple[str, str]]:
    assert result.cluster == OURS and result.region == REGION
    assert result.error is None
    arns = [orphan.arn for orphan in result.orphans]
    assert arns == sorted(arns) and len(arns) == len(set(arns))
    return {orphan.arn: (orphan.type, orphan.matched) for orphan in result.orphans}


def test_reports_exactly_what_the_controllers_left(aws: None) -> None:
    account = Account()
    lbc = {"elbv2.k8s.aws/cluster": OURS, "ingress.k8s.aws/stack": "apps/web"}
    alb = account.alb("k8s-apps-web", {**lbc, "ingress.k8s.aws/resource": "LoadBalancer"})
    tg = account.target_group("k8s-apps-web-tg", {**lbc, "ingress.k8s.aws/resource": "apps/web-web:80"})
    backend_sg = account.security_group(
        "k8s-traffic-dev", {"elbv2.k8s.aws/cluster": OURS, "elbv2.k8s.aws/resource": "backend-sg"}
    )
    csi_volume = account.volume(_csi_volume(OURS))
    newer_csi_volume = account.volume(
        {"ebs.csi.aws.com/cluster": "true", "ebs.csi.aws.com/cluster-name": OURS}
    )
    cni_eni = account.eni(
        {"cluster.k8s.amazonaws.com/name": OURS, "node.k8s.amazonaws.com/instance_id": "i-1"}
    )
    karpenter_volume = account.volume(
        {"eks:eks-cluster-name": OURS, f"kubernetes.io/cluster/{OURS}": "owned", "karpenter.sh/nodepool": "x"}
    )
    service_tags = {f"kubernetes.io/cluster/{OURS}": "owned", "kubernetes.io/service-name": "apps/legacy"}
    classic_elb = account.classic_elb("a1b2c3", service_tags)
    elb_sg = account.security_group("k8s-elb-a1b2c3", service_tags)
    _decoys(account)
    Account(ELSEWHERE).volume(_csi_volume(OURS))  # our cluster's name, in a region the sweep does not read

    result = sweep(OURS, REGION)

    lbc_tag, owned = f"elbv2.k8s.aws/cluster={OURS}", f"kubernetes.io/cluster/{OURS}=owned"
    assert _check(result) == {
        alb: ("elasticloadbalancing:loadbalancer", lbc_tag),
        tg: ("elasticloadbalancing:targetgroup", lbc_tag),
        backend_sg: ("ec2:security-group", lbc_tag),
        # Found by three queries, reported once: by the first of them.
        csi_volume: ("ec2:volume", f"ebs.csi.aws.com/cluster=true,KubernetesCluster={OURS}"),
        newer_csi_volume: ("ec2:volume", f"ebs.csi.aws.com/cluster=true,ebs.csi.aws.com/cluster-name={OURS}"),
        cni_eni: ("ec2:network-interface", f"cluster.k8s.amazonaws.com/name={OURS}"),
        karpenter_volume: ("ec2:volume", f"eks:eks-cluster-name={OURS}"),
        classic_elb: ("elasticloadbalancing:loadbalancer", owned),
        elb_sg: ("ec2:security-group", owned),
    }
    assert len(result.orphans) == 9
    assert not result.clean
    by_arn = {orphan.arn: orphan for orphan in result.orphans}
    assert by_arn[csi_volume].tags == _csi_volume(OURS)
    assert list(by_arn[csi_volume].tags) == sorted(_csi_volume(OURS))


def test_the_other_region_is_read_when_asked(aws: None) -> None:
    # The volume the test above leaves out for its region is found in its own: the filter would see it.
    volume = Account(ELSEWHERE).volume(_csi_volume(OURS))
    result = sweep(OURS, ELSEWHERE)
    assert [(o.arn, o.type) for o in result.orphans] == [(volume, "ec2:volume")]
    assert result.region == ELSEWHERE and result.error is None


def test_nothing_left_is_clean(aws: None) -> None:
    _decoys(Account())
    result = sweep(OURS, REGION)
    assert _check(result) == {}
    assert result.orphans == ()
    assert result.clean


def test_the_decoys_are_the_other_clusters_leftovers(aws: None) -> None:
    # The same account read for OTHER finds each of its seven: the decoys are real leftovers, not misses.
    _decoys(Account())
    result = sweep(OTHER, REGION)
    assert result.error is None and len(result.orphans) == 7


def test_a_named_profile_is_used(aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ec2 = boto3.client("ec2", region_name=REGION)
    made = ec2.create_volume(
        AvailabilityZone=f"{REGION}a", Size=1, TagSpecifications=_tags("volume", _csi_volume(OURS))
    )
    volume = _arn("volume", made["VolumeId"])
    # Only the profile has keys now: without it, the sweep would find no credentials.
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    credentials = tmp_path / "credentials"
    credentials.write_text("[ops]\naws_access_key_id = testing\naws_secret_access_key = testing\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    assert sweep(OURS, REGION).error is not None
    assert [orphan.arn for orphan in sweep(OURS, REGION, profile="ops").orphans] == [volume]


def _failed(result: SweepResult) -> str:
    assert result.error is not None
    assert result.orphans == () and not result.clean
    assert "\n" not in result.error and len(result.error) <= 300
    assert "Traceback" not in result.error
    return result.error


def test_no_credentials_is_an_error_naming_them(no_aws: None) -> None:
    error = _failed(sweep(OURS, REGION))
    assert error.startswith("no AWS credentials found")
    assert "AWS_PROFILE" in error and "aws:profile" in error


def test_an_unknown_profile_is_an_error_naming_it(no_aws: None) -> None:
    error = _failed(sweep(OURS, REGION, profile="nope"))
    assert "AWS profile 'nope' is not in the AWS config files" in error


def test_an_unknown_profile_in_the_environment_is_an_error_naming_aws_profile(
    no_aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_PROFILE", "gone")
    error = _failed(sweep(OURS, REGION))
    assert "AWS_PROFILE" in error and "gone" in error


def _answering(
    answer: Callable[..., Any], operation: str = f"{TAGGING}.GetResources"
) -> tuple[boto3.session.Session, list[dict[str, Any]]]:
    """A session whose ``operation`` calls ``answer`` answers, before a request is signed or sent, and
    whose STS GetCallerIdentity names moto's default account; and the parameters of each ``operation``
    call, as they would have been sent."""
    session = boto3.session.Session(
        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, region_name=REGION
    )
    calls: list[dict[str, Any]] = []

    def handler(params: dict[str, Any], **_: Any) -> Any:
        calls.append(params)
        return answer()

    def identity(**_: Any) -> Any:
        parsed = {"Account": RUNNER, "ResponseMetadata": {"HTTPStatusCode": 200}}
        return AWSResponse("https://sts.invalid", 200, {}, None), parsed

    session.events.register(f"before-call.{operation}", handler)
    session.events.register("before-call.sts.GetCallerIdentity", identity)
    return session, calls


def _refusal(code: str, message: str) -> Callable[[], tuple[AWSResponse, dict[str, Any]]]:
    def answer() -> tuple[AWSResponse, dict[str, Any]]:
        parsed = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": 400}}
        return AWSResponse("https://tagging.invalid", 400, {}, None), parsed

    return answer


def test_access_denied_is_an_error_naming_the_permission(no_aws: None) -> None:
    message = f"User arn:aws:iam::123456789012:user/ci is not authorized (key {ACCESS_KEY})\n{SECRET_KEY}"
    session, calls = _answering(_refusal("AccessDeniedException", message))
    error = _failed(sweep(OURS, REGION, session=session))
    assert error.startswith(f"not allowed to list tagged resources in {REGION} (AccessDeniedException: User")
    assert "tag:GetResources" in error
    assert ACCESS_KEY not in error and SECRET_KEY not in error and "[secret]" in error
    assert len(calls) == 1  # botocore does not retry a refusal, and the sweep stops at the first


def test_rejected_credentials_are_an_error_saying_to_refresh_them(no_aws: None) -> None:
    session, _ = _answering(_refusal("ExpiredTokenException", "The security token included has expired"))
    error = _failed(sweep(OURS, REGION, session=session))
    assert error.startswith("AWS rejected the credentials of the AWS session given (ExpiredTokenException")


def test_an_unreachable_endpoint_is_an_error_naming_the_region(no_aws: None) -> None:
    def unreachable() -> None:
        raise EndpointConnectionError(endpoint_url=f"https://tagging.{REGION}.amazonaws.com/")

    session, _ = _answering(unreachable)
    error = _failed(sweep(OURS, REGION, session=session))
    assert error.startswith(f"could not reach the Resource Groups Tagging API in {REGION}")


ODD_ARNS = {
    "arn:aws:elasticloadbalancing:eu-west-1:1:loadbalancer/net/k8s-x/1": "elasticloadbalancing:loadbalancer",
    "arn:aws:ec2:eu-west-1::snapshot/snap-1": "ec2:snapshot",  # a snapshot's ARN has no account
    "arn:aws:logs:eu-west-1:1:log-group:/aws/eks/dev/cluster:*": "logs:log-group",
    "arn:aws:s3:::a-bucket": "s3",  # a bare name: no type
    "arn:aws:sns:eu-west-1:1:topic": "sns",
    "arn:aws:ec2:eu-west-1:1:/odd": "ec2",
    "arn:aws:ec2:eu-west-1:1:": "ec2",
    "arn:aws:::::": "unknown",
    "arn:aws:ec2": "unknown",
    "not-an-arn": "unknown",
}


def test_every_query_is_read_once_and_odd_arns_do_not_break_the_sweep(no_aws: None) -> None:
    listing = [{"ResourceARN": arn, "Tags": [{"Key": "k", "Value": "v"}]} for arn in ODD_ARNS]
    listing += [{"ResourceARN": ""}, {"Tags": []}]  # no ARN: nothing to report

    def answer() -> tuple[AWSResponse, dict[str, Any]]:
        parsed = {"ResourceTagMappingList": listing, "ResponseMetadata": {"HTTPStatusCode": 200}}
        return AWSResponse("https://tagging.invalid", 200, {}, None), parsed

    session, calls = _answering(answer)
    result = sweep(OURS, REGION, session=session)

    assert result.error is None
    # Each query lists every one of them, and each is reported once, by the first query.
    assert {orphan.arn: orphan.type for orphan in result.orphans} == ODD_ARNS
    assert {orphan.matched for orphan in result.orphans} == {f"elbv2.k8s.aws/cluster={OURS}"}
    assert [orphan.tags for orphan in result.orphans] == [{"k": "v"}] * len(ODD_ARNS)
    assert [json.loads(call["body"]) for call in calls] == [
        {"TagFilters": filters, "ResourcesPerPage": 100} for filters in _queries(OURS)
    ]


def _queries(cluster: str) -> list[list[dict[str, Any]]]:
    driver = {"Key": "ebs.csi.aws.com/cluster", "Values": ["true"]}
    return [
        [{"Key": "elbv2.k8s.aws/cluster", "Values": [cluster]}],
        [driver, {"Key": "KubernetesCluster", "Values": [cluster]}],
        [driver, {"Key": "ebs.csi.aws.com/cluster-name", "Values": [cluster]}],
        [{"Key": "cluster.k8s.amazonaws.com/name", "Values": [cluster]}],
        [{"Key": "eks:eks-cluster-name", "Values": [cluster]}],
        [{"Key": f"kubernetes.io/cluster/{cluster}", "Values": ["owned"]}],
    ]


def test_the_client_is_bounded(no_aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    session, _ = _answering(_refusal("AccessDeniedException", "no"))
    made: list[dict[str, Any]] = []
    real_client = session.client

    def client(*args: Any, **kwargs: Any) -> Any:
        made.append(kwargs)
        return real_client(*args, **kwargs)

    monkeypatch.setattr(session, "client", client)
    sweep(OURS, REGION, session=session)
    assert len(made) == 2  # STS, which names the account, then the Tagging API
    for kwargs in made:
        config = kwargs["config"]
        assert (config.connect_timeout, config.read_timeout) == (5, 30)
        # Three attempts in all: botocore's ``max_attempts`` would count retries, one more than it says.
        assert config.retries == {"total_max_attempts": 3, "mode": "standard"}
        assert kwargs["region_name"] == REGION


@pytest.mark.parametrize(("cluster", "region"), [("", REGION), ("  ", REGION), (OURS, ""), (OURS, " ")])
def test_an_empty_cluster_or_region_is_an_argument_error(cluster: str, region: str) -> None:
    with pytest.raises(ArgumentError, match="got an empty one"):
        sweep(cluster, region)


def test_a_session_and_a_profile_together_are_an_argument_error() -> None:
    with pytest.raises(ArgumentError, match="not both"):
        sweep(OURS, REGION, profile="ops", session=boto3.session.Session(region_name=REGION))


def test_importing_the_sweep_does_not_import_boto3() -> None:
    code = (
        "import sys, gitops_infra.automation._cluster.sweep; "
        "print(sorted(m for m in sys.modules if 'boto' in m))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_destroy_sweeps_each_eks_cluster_its_state_held_in_the_cluster_s_region(aws: None) -> None:
    from gitops_infra.automation.teardown import _eks_clusters, _swept

    left = Account().volume({"ebs.csi.aws.com/cluster": "true", "KubernetesCluster": OURS})
    deployment = {
        "resources": [
            {
                "urn": "urn:pulumi:dev::p::pulumi:providers:aws::default",
                "type": "pulumi:providers:aws",
                "inputs": {"region": ELSEWHERE},  # the cluster's ARN names its region: that one is read
            },
            {
                "urn": "urn:pulumi:dev::p::aws:eks/cluster:Cluster::dev",
                "type": "aws:eks/cluster:Cluster",
                "provider": "urn:pulumi:dev::p::pulumi:providers:aws::default::id",
                "outputs": {"name": OURS, "arn": f"arn:aws:eks:{REGION}:123456789012:cluster/{OURS}"},
            },
        ]
    }
    (found,) = _swept(_eks_clusters(deployment))
    assert (found.cluster, found.region, found.error) == (OURS, REGION, None)
    assert [o.arn for o in found.orphans] == [left]
    assert _swept(()) == ()


# -- the stack's account: the AWS provider's aws:assumeRoles chain (issue 43, item 4) ---------------------

STACKS = "222222222222"  # the account the stack's resources are in: the runner reaches it by a role
HOP = "333333333333"  # the account of the first role of a chain
DEPLOYER = f"arn:aws:iam::{STACKS}:role/deployer"
JUMP = f"arn:aws:iam::{HOP}:role/jump"
# Made per run, as a trust policy's shared value is: it must never be shown.
EXTERNAL_ID = "ext-" + "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(12))


def _in_account(role_arn: str, session_name: str = "setup") -> Account:
    """Moto's ``Account`` maker, with credentials of ``role_arn``: what it makes is in that role's account
    (moto's multi-account STS ties each assumed role's keys to the account in its ARN)."""
    credentials = boto3.client("sts", region_name=REGION).assume_role(
        RoleArn=role_arn, RoleSessionName=session_name
    )["Credentials"]
    session = boto3.session.Session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )
    return Account(session=session, account=role_arn.split(":")[4])


def _assumed_roles(account: str) -> list[tuple[str, str, str | None]]:
    """(role, session name, external ID) of each role moto has seen assumed into ``account``."""
    from moto.sts.models import sts_backends

    return [(r.role_arn, r.session_name, r.external_id) for r in sts_backends[account]["aws"].assumed_roles]


def _stacks_leftovers() -> tuple[str, str]:
    """A volume and an ENI the cluster's controllers left in the stack's account, a decoy of the same
    cluster name in the runner's, and the volume's and ENI's ARNs."""
    theirs = _in_account(DEPLOYER)
    volume = theirs.volume(_csi_volume(OURS))
    eni = theirs.eni({"cluster.k8s.amazonaws.com/name": OURS})
    Account().volume(_csi_volume(OURS))  # the runner's account: another cluster of the same name
    return volume, eni


def test_the_role_chain_is_assumed_and_the_stack_s_account_is_swept(aws: None) -> None:
    volume, eni = _stacks_leftovers()
    roles = (
        AssumedRole(JUMP, session_name="ci-jump"),
        AssumedRole(DEPLOYER, external_id=EXTERNAL_ID, session_name="ci-deploy"),
    )

    result = sweep(OURS, REGION, roles=roles, account=STACKS)

    assert (result.error, result.account, result.region) == (None, STACKS, REGION)
    assert sorted(o.arn for o in result.orphans) == sorted([volume, eni])
    assert all(f":{STACKS}:" in o.arn for o in result.orphans)
    # Each role as the provider assumes it, with its session name and external ID (the account swept is
    # the last role's: the chain went in order).
    assert _assumed_roles(HOP) == [(JUMP, "ci-jump", None)]
    assert (DEPLOYER, "ci-deploy", EXTERNAL_ID) in _assumed_roles(STACKS)
    assert EXTERNAL_ID not in repr(roles) and EXTERNAL_ID not in repr(result)


def test_a_sweep_that_reaches_another_account_than_the_cluster_s_cannot_look(aws: None) -> None:
    _stacks_leftovers()

    # The runner's own credentials: account 123456789012 holds nothing for the cluster, yet it is not clean.
    alone = sweep(OURS, REGION, account=STACKS)
    # A role of a third account, or a chain that stops short, is no better.
    short = sweep(OURS, REGION, roles=(AssumedRole(JUMP),), account=STACKS)

    for result, reached in ((alone, RUNNER), (short, HOP)):
        error = _failed(result)
        assert result.account == reached
        assert error.startswith(f"the cluster is in AWS account {STACKS} (its ARN), but the credentials of ")
        assert f"are for account {reached}: nothing was listed" in error
    assert f"as role {JUMP}" in (short.error or "")


def test_a_role_that_cannot_be_assumed_is_an_error_naming_it_and_never_its_external_id(no_aws: None) -> None:
    token = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(64))
    message = (
        f"User: arn:aws:iam::{RUNNER}:user/ci is not authorized (ExternalId {EXTERNAL_ID}, token {token})"
    )
    session, calls = _answering(_refusal("AccessDenied", message), "sts.AssumeRole")
    roles = (AssumedRole(DEPLOYER, external_id=EXTERNAL_ID),)

    result = sweep(OURS, REGION, session=session, roles=roles, account=STACKS)

    error = _failed(result)
    assert error.startswith(f"could not assume role {DEPLOYER} (AccessDenied: User: arn:aws:iam::{RUNNER}")
    assert "its trust policy must let the credentials of the AWS session given assume it" in error
    assert "with the external ID given" in error
    assert EXTERNAL_ID not in error and token not in error and ACCESS_KEY not in error
    assert result.account is None  # it got no further than the role
    assert calls[0]["body"]["ExternalId"] == EXTERNAL_ID  # the provider's external ID was sent, as given
    assert calls[0]["body"]["RoleSessionName"] == "gitops-infra-sweep"  # none given: one of ours


def _state_with_a_cluster_in(account: str, **provider_inputs: object) -> dict[str, Any]:
    """A deployment as ``pulumi stack export`` shows it: the AWS provider (its inputs as the engine keeps
    them) and an EKS cluster whose ARN names ``account``."""
    return {
        "resources": [
            {
                "urn": "urn:pulumi:dev::p::pulumi:providers:aws::default_7_0_0",
                "type": "pulumi:providers:aws",
                "inputs": {"region": REGION, **provider_inputs},
            },
            {
                "urn": "urn:pulumi:dev::p::aws:eks/cluster:Cluster::dev",
                "type": "aws:eks/cluster:Cluster",
                "provider": "urn:pulumi:dev::p::pulumi:providers:aws::default_7_0_0::id",
                "outputs": {"name": OURS, "arn": f"arn:aws:eks:{REGION}:{account}:cluster/{OURS}"},
            },
        ]
    }


def test_a_destroy_sweeps_the_account_its_aws_provider_assumes_a_role_into(aws: None) -> None:
    from gitops_infra.automation.teardown import _eks_clusters, _swept

    volume, eni = _stacks_leftovers()
    # aws:assumeRoles as the engine keeps a provider's object input: JSON text (pulumi_aws's Provider
    # serializes it with pulumi.runtime.to_json; a stack's config is passed so too).
    chain = json.dumps([{"roleArn": DEPLOYER, "externalId": EXTERNAL_ID, "sessionName": "pulumi"}])

    (found,) = _swept(_eks_clusters(_state_with_a_cluster_in(STACKS, assumeRoles=chain)))
    assert sorted(o.arn for o in found.orphans) == sorted([volume, eni])
    assert (found.error, found.account) == (None, STACKS)


def test_a_destroy_without_the_role_never_finds_a_cluster_in_another_account_clean(aws: None) -> None:
    from gitops_infra.automation.teardown import _eks_clusters, _swept

    _in_account(DEPLOYER).volume(_csi_volume(OURS))

    # The provider's role is not in the state: the runner's own account holds nothing for the cluster.
    (unreached,) = _swept(_eks_clusters(_state_with_a_cluster_in(STACKS)))

    assert not unreached.clean and unreached.orphans == ()
    assert unreached.account == RUNNER
    assert f"the cluster is in AWS account {STACKS}" in (unreached.error or "")
