#!/usr/bin/env bash
# Builds Argo CD (v3.6.2, pinned by the wrapper module tools/cluster/argo-cd) into .tools/cluster/bin
# (git-ignored), with what the local harness (gitops_infra/local/_argocd.py) runs it with:
#   argocd              the multi-call binary; the harness links argocd-application-controller,
#                       argocd-repo-server and argocd-applicationset-controller to it (the role is argv[0])
#   argocd-dev-mounter  upstream's dev-mounter: writes the known-hosts and TLS ConfigMaps to the paths the
#                       repo server reads, as the kubelet's ConfigMap volumes do in a pod
#   argo-cd/            its CRDs (manifests/crds), its install manifest (for the settings ConfigMaps and
#                       Secrets), the two wrappers the repo server runs git and gpg through (hack/), and
#                       kustomize v5.8.3 (tools/cluster/kustomize; bin/), which the repo server runs for a
#                       kustomization.yaml: apart from bin, so that it is on no PATH but the repo server's
# and makes sure Debian's redis-server is installed (its cache). build.sh runs it; it is skipped while the
# two modules' go.mod and go.sum files, and this script, are unchanged, on a stamp of its own.
#
# Helm is not built: the local cluster's fleets render with kustomize or plain YAML, and a Helm-typed
# Application is outside what its tests run (helm's CLI would add about 4 minutes of CPU to a cold setup).
# Argo CD's go directive asks for Go 1.27: a served toolchain is used. CONTRIBUTING.md's measured times
# have what the cold build costs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

here=tools/cluster
out=.tools/cluster
bin=$out/bin
data=$out/argo-cd
module=github.com/argoproj/argo-cd/v3
export GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0
say() { printf 'setup: cluster: %s\n' "$*"; }
die() { printf 'setup: cluster: error: %s\n' "$*" >&2; exit 1; }

if ! command -v redis-server >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing Debian's redis-server (Argo CD's cache, on the local cluster)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends redis-server >/dev/null ||
      die "apt-get install redis-server failed; install it and rerun setup"
  else
    die "no redis-server: install it (Argo CD's cache on the local cluster)"
  fi
fi

want=$(cat "$here"/argo-cd/go.mod "$here"/argo-cd/go.sum "$here"/kustomize/go.mod "$here"/kustomize/go.sum \
  "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)
stamp=$data/.setup-stamp
if [ -x "$bin/argocd" ] && [ -x "$bin/argocd-dev-mounter" ] && [ -x "$data/bin/kustomize" ] &&
  [ -f "$data/crds/application-crd.yaml" ] && [ -f "$data/install.yaml" ] && [ -x "$data/hack/gpg-wrapper.sh" ] &&
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  say "reusing argocd and argocd-dev-mounter in $bin, kustomize in $data/bin"
  exit 0
fi

command -v go >/dev/null || die "no Go toolchain to build Argo CD"
version=$(go -C "$here/argo-cd" list -m -f '{{.Version}}' "$module") || die "could not resolve $module"
src=$(go -C "$here/argo-cd" mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || true
[ -d "$src" ] || die "could not download $module@$version"
rm -rf "$data"
mkdir -p "$bin" "$data/bin" "$data/crds" "$data/hack"
build() { # build PATH DIR PACKAGE [go build flags...]
  local path=$1 dir=$2 package=$3 started
  shift 3
  started=$(date +%s)
  go -C "$dir" build -trimpath "$@" -o "$root/$path" "$package"
  say "built $(basename "$path") in $(($(date +%s) - started))s ($(du -h "$path" | cut -f1))"
}
say "building argocd ($version) and argocd-dev-mounter into $bin, kustomize into $data/bin; a cold build" \
  "takes about 9 minutes of CPU and 2.3 GB"
# Stamped as upstream's Makefile does: Argo CD reports its version to the Applications it syncs.
build "$bin/argocd" "$here/argo-cd" "$module/cmd" -ldflags "-s -w -X $module/common.version=${version#v}"
build "$bin/argocd-dev-mounter" "$here/argo-cd" "$module/hack/dev-mounter" -ldflags "-s -w"
build "$data/bin/kustomize" "$here/kustomize" sigs.k8s.io/kustomize/kustomize/v5 \
  -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$(go -C "$here/kustomize" list -m -f '{{.Version}}' sigs.k8s.io/kustomize/kustomize/v5)"

install -m 0644 "$src"/manifests/crds/{application,applicationset,appproject}-crd.yaml "$data/crds/"
install -m 0644 "$src/manifests/install.yaml" "$data/install.yaml"
install -m 0755 "$src/hack/git-verify-wrapper.sh" "$src/hack/gpg-wrapper.sh" "$data/hack/"
echo "$want" >"$stamp"
say "copied Argo CD's CRDs, install manifest and git/gpg wrappers into $data"
