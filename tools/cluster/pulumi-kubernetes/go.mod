// Pins the Kubernetes resource provider the engine uses against the local cluster
// (pulumi-resource-kubernetes). Only this pseudo-version of provider/v4 is served by the module proxy:
// upstream tags releases at the repository root, so every provider/v4.x.y tag is refused. It is about
// 4.24 plus unreleased changes, while the Python SDK is 4.34.x: the engine warns about the skew.
module gitops-infra.local/tools/cluster/pulumi-kubernetes

go 1.26

require github.com/pulumi/pulumi-kubernetes/provider/v4 v4.0.0-20260115033456-f47bc2d6f199
