"""How :func:`gitops_infra.platform.build_platform` composes the parts beyond the cluster, Flux and the
contract, one module each: ``credentials`` (the git credential a config holds), ``tenants``, ``secrets``."""
