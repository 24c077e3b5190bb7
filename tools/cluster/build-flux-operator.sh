#!/usr/bin/env bash
# Builds the Flux Operator (v0.59.0, pinned by the wrapper module tools/cluster/flux-operator) into
# .tools/cluster/bin/flux-operator (git-ignored), with what the local harness (gitops_infra/local/
# _flux_operator.py) runs it with: Flux's distribution manifests its module bundles (config/data: Flux v2.2.3
# to v2.9.5, so a FluxInstance installs with no network) in .tools/cluster/flux-operator-data, its storage
# path, and its CRDs (config/crd/bases) in .tools/cluster/crds/flux-operator, applied only when it runs.
# build.sh runs it; it is skipped while the module's go.mod and go.sum, and this script, are unchanged, on a
# stamp of its own (a cluster without the operator needs none of it).
#
# As the pulumi-kubernetes provider, it builds from a writable copy of the module: the operator embeds its
# web UI's build output (web/dist), which the module does not ship, so a placeholder page stands in (the
# harness turns the web server off); and the go-containerregistry authn/kubernetes pseudo-version it names
# is refused by the proxy, so an earlier one of the same module replaces it. Its go directive asks for Go
# 1.27: a served toolchain is used. Built with GOFIPS140=latest as upstream's Makefile does: the operator
# exits at start unless it runs in FIPS 140-3 mode. CONTRIBUTING.md's measured times have what the cold
# build costs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

here=tools/cluster/flux-operator
out=.tools/cluster
module=github.com/controlplaneio-fluxcd/flux-operator
authn=github.com/google/go-containerregistry/pkg/authn/kubernetes
authn_version=v0.0.0-20260224031529-85f2bf5f7303
export GOTOOLCHAIN=go1.27.3
say() { printf 'setup: cluster: %s\n' "$*"; }
die() { printf 'setup: cluster: error: %s\n' "$*" >&2; exit 1; }

want=$(cat "$here/go.mod" "$here/go.sum" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)
stamp=$out/flux-operator-data/.setup-stamp
if [ -x "$out/bin/flux-operator" ] && [ -d "$out/flux-operator-data/flux" ] &&
  [ -f "$out/crds/flux-operator/fluxcd.controlplane.io_fluxinstances.yaml" ] &&
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  say "reusing flux-operator in $out/bin"
  exit 0
fi

command -v go >/dev/null || die "no Go toolchain to build flux-operator"
version=$(go -C "$here" list -m -f '{{.Version}}' "$module") || die "could not resolve $module in $here/go.mod"
src=$(go -C "$here" mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || true
[ -d "$src" ] || die "could not download $module@$version"
copy=$out/src/flux-operator
rm -rf "$copy"
mkdir -p "$(dirname "$copy")" "$out/bin"
cp -r "$src" "$copy"
chmod -R u+w "$copy"
mkdir -p "$copy/web/dist"
printf '<!doctype html><title>Flux Operator</title><p>The web UI is not built here.</p>\n' >"$copy/web/dist/index.html"
go -C "$copy" mod edit -replace "$authn=$authn@$authn_version"

started=$(date +%s)
say "building flux-operator into $out/bin; a cold build takes about 5 minutes of CPU and 1.3 GB"
CGO_ENABLED=0 GOFIPS140=latest go -C "$copy" build -mod=mod -trimpath \
  -ldflags "-s -w -X main.VERSION=${version#v}" -o "$root/$out/bin/flux-operator" ./cmd/operator
rm -rf "$out/flux-operator-data" "$out/crds/flux-operator"
mkdir -p "$out/flux-operator-data" "$out/crds/flux-operator"
cp -r "$src/config/data/." "$out/flux-operator-data/"
install -m 0644 "$src"/config/crd/bases/*.yaml "$out/crds/flux-operator/"
chmod -R u+w "$out/flux-operator-data"
echo "$want" >"$stamp"
say "built flux-operator in $(($(date +%s) - started))s ($(du -h "$out/bin/flux-operator" | cut -f1)), Flux's" \
  "manifests in $out/flux-operator-data, its CRDs in $out/crds/flux-operator"
