"""``sealed-secrets keygen`` and ``cert`` on the real engine: a key pair written into a stack's secret
config value and never shown, a rotation added beside it, and each refusal changing nothing."""

from __future__ import annotations

import contextlib
import json
import threading

import pytest
from click.testing import CliRunner
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pulumi import automation as auto

from gitops_infra.automation import generate_sealing_key, sealing_cert, up
from gitops_infra.cli import EXIT_ERROR, EXIT_OK, main
from gitops_infra.errors import ArgumentError, ConfigError, OperationFailedError

from .conftest import FixtureRepo

pytestmark = pytest.mark.engine

KEY = "gitops-infra:sealedSecretsKeys"


def _cli(repo: FixtureRepo, *args: str) -> tuple[int, str, str]:
    result = CliRunner(env=repo.env).invoke(main, [*args, "--cwd", str(repo.root)])
    return result.exit_code, result.stdout, result.stderr


def _pairs(repo: FixtureRepo) -> dict[str, dict[str, str]]:
    held = repo.raw_stack().get_config(KEY)
    assert held.secret
    return dict(json.loads(held.value))


def _settings(repo: FixtureRepo) -> str:
    return (repo.root / "Pulumi.dev.yaml").read_text()


def test_keygen_writes_a_pair_as_a_secret_and_shows_only_the_cert(repo: FixtureRepo) -> None:
    made = generate_sealing_key("dev", options=repo.options)

    pairs = _pairs(repo)
    assert list(pairs) == [""] and made.rotations == ("",) and made.config_key == KEY
    cert = x509.load_pem_x509_certificate(pairs[""]["cert"].encode())
    assert pairs[""]["cert"] == made.cert
    key = pairs[""]["privateKey"]
    public = cert.public_key()
    assert isinstance(public, rsa.RSAPublicKey) and public.key_size == 4096
    private = serialization.load_pem_private_key(key.encode(), password=None)
    assert isinstance(private, rsa.RSAPrivateKey) and private.public_key() == public  # the cert's own key
    body = key.splitlines()[1]
    # The key is in the stack file only encrypted, and in no result.
    assert "secure:" in _settings(repo) and body not in _settings(repo)
    assert body not in repr(made)

    code, stdout, stderr = _cli(repo, "sealed-secrets", "keygen", "dev", "--rotation", "2027-01")
    assert code == EXIT_OK and "rotation '2027-01'" in stdout
    code, json_out, json_err = _cli(
        repo, "sealed-secrets", "keygen", "dev", "--rotation", "2028-01", "--json"
    )
    document = json.loads(json_out)
    assert code == EXIT_OK and document["rotation"] == "2028-01"
    after = _pairs(repo)
    # Neither new private key is in what either command printed.
    shown = stdout + stderr + json_out + json_err
    assert all(after[r]["privateKey"].splitlines()[1] not in shown for r in ("2027-01", "2028-01"))
    assert list(after) == ["", "2027-01", "2028-01"]
    assert after[""] == pairs[""]  # the pairs already there are kept as they were


def test_keygen_refuses_a_rotation_it_holds_and_a_malformed_value_and_writes_nothing(
    repo: FixtureRepo,
) -> None:
    generate_sealing_key("dev", options=repo.options)
    before = _settings(repo)

    with pytest.raises(ArgumentError, match="already holds a key pair for rotation ''"):
        generate_sealing_key("dev", options=repo.options)
    with pytest.raises(ArgumentError, match="at most 64 characters"):
        generate_sealing_key("dev", rotation="x" * 65, options=repo.options)
    assert _settings(repo) == before

    repo.raw_stack().set_config(KEY, auto.ConfigValue("[1, 2]", secret=True))
    before = _settings(repo)
    with pytest.raises(ConfigError) as refused:
        generate_sealing_key("dev", rotation="next", options=repo.options)
    assert refused.value.problems[0].startswith(KEY)
    assert "[1, 2]" not in str(refused.value)
    assert _settings(repo) == before
    code, stdout, stderr = _cli(repo, "sealed-secrets", "keygen", "dev", "--rotation", "next")
    assert code == EXIT_ERROR and KEY in stdout + stderr and "Traceback" not in stdout + stderr


def test_cert_reads_the_stack_output_and_says_when_there_is_none(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)  # the fixture program exports no sealedSecretsCert
    with pytest.raises(OperationFailedError, match="has no output sealedSecretsCert"):
        sealing_cert("dev", options=repo.options)
    code, stdout, stderr = _cli(repo, "sealed-secrets", "cert", "dev")
    assert code == EXIT_ERROR and "sealedSecretsCert" in stdout + stderr and "Traceback" not in stderr
    code, stdout, stderr = _cli(repo, "sealed-secrets", "cert", "no-such-stack")
    assert code == EXIT_ERROR and "no-such-stack" in stderr and "Traceback" not in stderr


def test_two_keygens_at_once_each_keep_their_pair(repo: FixtureRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two terminals (or a person and a CI job) add a rotation each at the same time: both pairs are held.
    Each keygen reads the value, adds its pair and writes it back; both reading before either writes
    (forced here: each waits for the other once it has read) would drop the first writer's pair, whose
    cert it had already printed."""
    from gitops_infra.automation import sealing_keys

    made = sealing_keys.new_sealing_key_pair
    both_read = threading.Barrier(2)

    def after_the_other_read() -> tuple[str, str]:
        # With the read-to-write serialized the other never comes: go on alone after the wait.
        with contextlib.suppress(threading.BrokenBarrierError):
            both_read.wait(timeout=5)
        return made()

    monkeypatch.setattr(sealing_keys, "new_sealing_key_pair", after_the_other_read)
    outcomes: dict[str, object] = {}

    def keygen(rotation: str) -> None:
        try:
            outcomes[rotation] = generate_sealing_key("dev", rotation=rotation, options=repo.options)
        except Exception as exc:  # collected for the assertion below
            outcomes[rotation] = exc

    threads = [threading.Thread(target=keygen, args=(rotation,)) for rotation in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(not isinstance(outcome, Exception) for outcome in outcomes.values()), outcomes
    assert sorted(_pairs(repo)) == ["a", "b"]
