"""The stack program (``Pulumi.yaml`` → ``stacks/``): load the config, build the platform, export outputs.

A bad config stops the program before any resource is made. It is raised as ``pulumi.RunError``, which
the language host reports as a plain error message (every problem, by key path) with no traceback.
"""

import pulumi

from gitops_infra import ConfigError, build_platform, load_stack_config

try:
    config = load_stack_config()
except ConfigError as exc:
    raise pulumi.RunError(str(exc)) from None

platform = build_platform(config)
for key, value in platform.outputs().items():
    pulumi.export(key, value)
