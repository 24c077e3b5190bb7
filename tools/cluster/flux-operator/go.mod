// Pins the Flux Operator v0.59.0 for the local cluster. build-flux-operator.sh builds it from a writable copy
// of this module (as the pulumi-kubernetes provider is built): the operator embeds its web UI's build
// output, which its module does not ship, and names a go-containerregistry authn/kubernetes pseudo-version
// the proxy refuses. Its go directive asks for Go 1.27: the script runs with GOTOOLCHAIN=go1.27.3.
module gitops-infra.local/tools/cluster/flux-operator

go 1.26

require github.com/controlplaneio-fluxcd/flux-operator v0.59.0
