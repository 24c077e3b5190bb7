"""The gitops-infra CrossGuard policy pack (``PulumiPolicy.yaml`` + ``__main__.py`` in this directory).

Run it with a preview or an update::

    pulumi preview --policy-pack gitops_infra/policy
    pulumi up --policy-pack gitops_infra/policy --policy-pack-config policy-config.json

or through the automation layer::

    from gitops_infra.automation import preview

    preview("prod", policy_packs=["gitops_infra/policy"])

The policies and their enforcement levels are in :mod:`gitops_infra.policy.pack`; the checks are plain
functions in :mod:`gitops_infra.policy.rules`. Importing this package does not start the pack.
"""
