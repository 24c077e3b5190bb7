"""A test-only policy pack with one MANDATORY policy for the fixture's dynamic-provider files.

``no-forbidden-content`` fails any ``pulumi-python:dynamic:Resource`` whose ``content`` is
``forbidden``, so an engine test can trip a MANDATORY violation on purpose, with no cloud resources.
"""

import io
import sys

from pulumi_policy import (
    EnforcementLevel,
    PolicyPack,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

# As in gitops_infra/policy/__main__.py: the port pulumi-policy writes must not wait in a pipe's buffer.
sys.stdout = io.TextIOWrapper(io.FileIO(sys.stdout.fileno(), "w", closefd=False), write_through=True)

PACK_NAME = "engine-test-policies"
POLICY_NAME = "no-forbidden-content"
FILE_TYPE = "pulumi-python:dynamic:Resource"
FORBIDDEN = "forbidden"


def no_forbidden_content(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type == FILE_TYPE and args.props.get("content") == FORBIDDEN:
        report_violation(f"file {args.name!r} has the content {FORBIDDEN!r}", None)


PolicyPack(
    name=PACK_NAME,
    policies=[
        ResourceValidationPolicy(
            name=POLICY_NAME,
            description="Fixture files must not hold forbidden content.",
            validate=no_forbidden_content,
            enforcement_level=EnforcementLevel.MANDATORY,
        )
    ],
)
