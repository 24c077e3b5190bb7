#!/usr/bin/env bash
# Builds the local cluster's toolchain into .tools/cluster/bin (git-ignored), from the Go wrapper modules
# beside this script, the way tools/setup.sh builds the Pulumi engine: skipped while the pins (every
# go.mod and go.sum under tools/cluster, and this script) are unchanged, and Go's module and build caches
# are kept, so a change rebuilds only what it touches.
#
#   kubernetes/            kube-apiserver, kube-controller-manager and kube-scheduler (v1.34.4), etcd (v3.6.4)
#   kwok/                  kwok (v0.8.0), which plays the kubelet of fake nodes: pods run, no container does
#   source-controller/            Flux v2.9.4's controllers, one wrapper module each (their replaces
#   kustomize-controller/         differ): source-controller and kustomize-controller (v1.9.4),
#   helm-controller/              helm-controller (v1.6.3), notification-controller (v1.9.3),
#   notification-controller/      image-reflector-controller and image-automation-controller (v1.2.4)
#   image-reflector-controller/
#   image-automation-controller/
#   registry/              distribution's registry (v3.1.2): the image source of the image automation tests
#   pulumi-kubernetes/     pulumi-resource-kubernetes (the one provider/v4 pseudo-version served)
#   sealed-secrets/        the Sealed Secrets controller and kubeseal (v0.40.0): sealed-secrets.sh builds them
#   external-secrets/      External Secrets Operator (v0.20.4), by build-external-secrets.sh, on a stamp of its own
#   flux-operator/         the Flux Operator (v0.59.0) and Flux's manifests it bundles, by build-flux-operator.sh,
#                          on a stamp of its own
#   argo-cd/, kustomize/   Argo CD (v3.6.2) and the kustomize its repo server runs (v5.8.3), by build-argo-cd.sh,
#                          on a stamp of its own
#
#   build.sh           both parts below, the core first
#   build.sh core      what every local cluster runs: the control plane, kwok, Flux's six controllers and
#                      their CRDs, the Kubernetes provider, sshd (on the stamp .tools/cluster/.setup-stamp)
#   build.sh extras    what only some cluster tests start, on request: the registry, Sealed Secrets (on the
#                      stamp .setup-stamp-extras), External Secrets, the Flux Operator and Argo CD (each on
#                      a stamp of its own). `make test` runs the core's cluster tests while these build.
#
# It also copies the Flux CRDs those controllers ship (config/crd/bases) into .tools/cluster/crds (so
# notification-controller's no longer need controller-gen), and concatenates kwok's node and pod stages
# (its module's kustomize/stage/{node,pod}/fast) into .tools/cluster/kwok-stages.yaml: the kwok binary
# ships none, and exits "no stages found" without them. And it makes sure Debian's
# openssh-server is installed: the cluster tests serve the fleet repository over SSH.
# docs/upstream-notes.md has the checked versions and why each replace is there. A cold build takes
# about 25 minutes on 2 cores (kube-scheduler adds about 10 s, kwok about 2 minutes, the registry about 2.5).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

here=tools/cluster
out=.tools/cluster
bin=$out/bin
say() { printf 'setup: cluster: %s\n' "$*"; }
die() { printf 'setup: cluster: error: %s\n' "$*" >&2; exit 1; }

# --- sshd, for the fleet repository the tests and the demo serve over SSH ---------------------------------
if ! command -v sshd >/dev/null && [ ! -x /usr/sbin/sshd ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing Debian's openssh-server (the cluster tests serve their fleet repository over SSH)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openssh-server >/dev/null ||
      die "apt-get install openssh-server failed; install it and rerun setup"
  else
    die "no sshd: install openssh-server (the cluster tests serve their fleet repository over SSH)"
  fi
fi

command -v go >/dev/null || die "the local cluster is built from Go modules: install Go 1.26+ and rerun setup"

part=${1:-all}
case "$part" in
  all | core | extras) ;;
  *) die "unknown part '$part': expected core or extras (or nothing, for both)" ;;
esac

# version MODULE FILE: the version FILE's go.mod requires of MODULE.
version() {
  awk -v m="$1" '/^[[:space:]]*\/\// { next } { for (i = 1; i < NF; i++) if ($i == m) { print $(i + 1); exit } }' "$2"
}

mkdir -p "$bin" "$out/crds"
export CGO_ENABLED=0
build() { # build NAME DIR PACKAGE [go build flags...]
  local name=$1 dir=$2 package=$3 started
  shift 3
  started=$(date +%s)
  go -C "$dir" build -trimpath "$@" -o "$root/$bin/$name" "$package"
  say "built $name in $(($(date +%s) - started))s ($(du -h "$bin/$name" | cut -f1))"
}
fingerprint_of() { LC_ALL=C sort | xargs cat | sha256sum | cut -d' ' -f1; }

# --- extras: each on a stamp of its own, so a change to one relinks nothing else ---------------------------
extras() {
  bash "$here/build-external-secrets.sh"
  bash "$here/build-flux-operator.sh"
  bash "$here/build-argo-cd.sh"
  local want started
  want=$(printf '%s\n' "$here"/registry/go.{mod,sum} "$here"/sealed-secrets/go.{mod,sum} "$here/sealed-secrets.sh" |
    fingerprint_of)
  if [ -x "$bin/registry" ] && [ -x "$bin/sealed-secrets-controller" ] && [ -x "$bin/kubeseal" ] &&
    [ -f "$out/crds/sealed-secrets/bitnami.com_sealedsecrets.yaml" ] &&
    [ "$(cat "$out/.setup-stamp-extras" 2>/dev/null)" = "$want" ]; then
    say "reusing registry, sealed-secrets-controller and kubeseal in $bin"
    return 0
  fi
  started=$(date +%s)
  # Stamped as upstream's Makefile does; without it the registry says v3.1.2+unknown.
  local distribution=github.com/distribution/distribution/v3
  build registry "$here/registry" "$distribution/cmd/registry" \
    -ldflags "-s -w -X $distribution/version.version=$(version "$distribution" "$here/registry/go.mod")"
  bash "$here/sealed-secrets.sh" "$out"
  echo "$want" >"$out/.setup-stamp-extras"
  say "built the registry and Sealed Secrets in $(($(date +%s) - started))s"
}
if [ "$part" = extras ]; then
  extras
  exit 0
fi

# --- core ---------------------------------------------------------------------------------------------------
# Every go.mod, go.sum and script here but the extras'.
want=$(find "$here" -maxdepth 2 \( -name go.mod -o -name go.sum -o -name '*.sh' \) \
  -not -path "$here/external-secrets/*" -not -path "$here/flux-operator/*" -not -path "$here/argo-cd/*" \
  -not -path "$here/kustomize/*" -not -path "$here/registry/*" -not -path "$here/sealed-secrets/*" \
  -not -name 'build-*.sh' -not -name sealed-secrets.sh | fingerprint_of)
flux=(source-controller kustomize-controller helm-controller notification-controller image-reflector-controller
  image-automation-controller)
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok "${flux[@]}" pulumi-resource-kubernetes)
# One CRD of each source: a toolchain built before these controllers' CRDs were copied is rebuilt.
crds=(source.toolkit.fluxcd.io_gitrepositories.yaml notification.toolkit.fluxcd.io_providers.yaml
  helm.toolkit.fluxcd.io_helmreleases.yaml image.toolkit.fluxcd.io_imagepolicies.yaml)
complete=true
for binary in "${binaries[@]}"; do
  [ -x "$bin/$binary" ] || complete=false
done
for crd in "${crds[@]}"; do
  [ -f "$out/crds/$crd" ] || complete=false
done
[ -f "$out/kwok-stages.yaml" ] || complete=false
if $complete && [ "$(cat "$out/.setup-stamp" 2>/dev/null)" = "$want" ]; then
  say "reusing ${binaries[*]} in $bin"
  [ "$part" = all ] && extras
  exit 0
fi

total=$(date +%s)
say "building ${binaries[*]} into $bin; a cold build takes about 25 minutes on 2 cores"

k8s=$(version k8s.io/kubernetes "$here/kubernetes/go.mod")
minor=${k8s#v1.}
minor=${minor%%.*}
stamp="-X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=1"
stamp="$stamp -X k8s.io/component-base/version.gitMinor=$minor"
# Without the version stamp the server says v0.0.0-master, and clients that check versions misbehave.
build kube-apiserver "$here/kubernetes" k8s.io/kubernetes/cmd/kube-apiserver -ldflags "-s -w $stamp"
build kube-controller-manager "$here/kubernetes" k8s.io/kubernetes/cmd/kube-controller-manager -ldflags "-s -w $stamp"
build kube-scheduler "$here/kubernetes" k8s.io/kubernetes/cmd/kube-scheduler -ldflags "-s -w $stamp"
build etcd "$here/kubernetes" go.etcd.io/etcd/server/v3 -ldflags "-s -w"
for controller in "${flux[@]}"; do
  build "$controller" "$here/$controller" "github.com/fluxcd/$controller" -ldflags "-s -w"
done
build kwok "$here/kwok" sigs.k8s.io/kwok/cmd/kwok -ldflags "-s -w"

# kwok's stages: Ready for its nodes; Running for their pods, Succeeded for a Job's, and a deleted pod removed.
kwok_dir=$(go -C "$here/kwok" list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
for stage in node/fast/node-initialize pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
  printf -- '---\n'
  cat "$kwok_dir/kustomize/stage/$stage.yaml"
done >"$out/kwok-stages.yaml"
say "copied kwok's node and pod stages into $out/kwok-stages.yaml"

# The Flux CRDs ship in the controllers' own modules.
rm -f "$out"/crds/*.yaml
for controller in "${flux[@]}"; do
  dir=$(go -C "$here/$controller" list -m -f '{{.Dir}}' "github.com/fluxcd/$controller")
  cp "$dir"/config/crd/bases/*.yaml "$out/crds/"
done
chmod u+w "$out"/crds/*.yaml
say "copied $(ls "$out"/crds/*.yaml | wc -l) Flux CRDs into $out/crds"

# pulumi-resource-kubernetes embeds two generated files its module does not ship, and replaces its SDK
# with a sibling directory that is not in the module: build a writable copy, as its own Makefile would.
provider_module=github.com/pulumi/pulumi-kubernetes/provider/v4
provider_version=$(version "$provider_module" "$here/pulumi-kubernetes/go.mod")
provider_src=$(go -C "$here/pulumi-kubernetes" mod download -json "$provider_module@$provider_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$provider_src" ] || die "could not download $provider_module@$provider_version"
copy=$out/src/pulumi-kubernetes-provider
rm -rf "$copy"
mkdir -p "$(dirname "$copy")"
cp -r "$provider_src" "$copy"
chmod -R u+w "$copy"
go -C "$copy" mod edit -dropreplace github.com/pulumi/pulumi-kubernetes/sdk/v4
(cd "$copy/cmd/pulumi-resource-kubernetes" && VERSION="${provider_version#v}" go run -mod=mod generate.go)
build pulumi-resource-kubernetes "$copy" ./cmd/pulumi-resource-kubernetes -mod=mod \
  -ldflags "-s -w -X $provider_module/pkg/version.Version=${provider_version#v}"

echo "$want" >"$out/.setup-stamp"
say "built the local cluster's toolchain in $(($(date +%s) - total))s; $(du -sh "$bin" | cut -f1) in $bin"
[ "$part" = all ] && extras
exit 0
