"""The cluster a stack made, reached from the stack's state: private plumbing of
:mod:`gitops_infra.automation`.

- ``kube``: its provider's kubeconfig, decrypted from the state and held in memory, and API discovery;
- ``flux_apis`` and ``gitops``: Flux's kinds, and the GitOps layer's read (drift, status, promote);
- ``readiness``: why a Kubernetes object never became Ready, in its controller's words;
- ``drain``, ``kinds`` and ``workloads``: the drain before a destroy (what Flux made goes first), the
  kinds it deletes, and what mounts the claims it deletes;
- ``sweep``: the sweep after a destroy, of what AWS still holds tagged for the cluster.
"""
