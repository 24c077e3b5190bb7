"""Serve the gitops-infra policy pack; the engine runs this file (``--policy-pack gitops_infra/policy``).

The policies live in :mod:`gitops_infra.policy.pack` and their rules in :mod:`gitops_infra.policy.rules`;
this file only assembles the pack, because constructing a ``PolicyPack`` starts its gRPC server and blocks.
"""

import io
import sys

from pulumi_policy import EnforcementLevel, PolicyPack

from gitops_infra.policy.pack import PACK_NAME, policies

# pulumi-policy writes the port the engine waits for to sys.stdout.buffer and never flushes it: unless
# PYTHONUNBUFFERED is set, a pipe holds it back and `pulumi preview --policy-pack` hangs. Unbuffered here.
sys.stdout = io.TextIOWrapper(io.FileIO(sys.stdout.fileno(), "w", closefd=False), write_through=True)

PolicyPack(
    name=PACK_NAME,
    policies=policies(),
    # Only reached by a policy without a level of its own, and every policy has one.
    enforcement_level=EnforcementLevel.ADVISORY,
)
