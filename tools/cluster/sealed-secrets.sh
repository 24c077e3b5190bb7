#!/usr/bin/env bash
# Builds the Sealed Secrets controller and kubeseal (github.com/bitnami/sealed-secrets, pinned by the wrapper
# module sealed-secrets/) into OUT/bin, and copies the SealedSecret CRD its module ships into
# OUT/crds/sealed-secrets: apart from Flux's, which every local cluster applies, since only a cluster that
# runs the controller (gitops_infra/local/_sealed_secrets.py, on request) wants it. build.sh runs it, under
# the same stamp; run alone, it builds into the OUT given.
#
#   bash tools/cluster/sealed-secrets.sh OUT
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:?usage: sealed-secrets.sh OUT}
here=tools/cluster/sealed-secrets
module=github.com/bitnami/sealed-secrets
say() { printf 'setup: cluster: %s\n' "$*"; }

mkdir -p "$out/bin" "$out/crds/sealed-secrets"
out=$(cd "$out" && pwd)
version=$(go -C "$here" list -m -f '{{.Version}}' "$module")
for command in controller kubeseal; do
  name=$([ "$command" = controller ] && echo sealed-secrets-controller || echo kubeseal)
  started=$(date +%s)
  # main.VERSION, as upstream's Makefile stamps it: otherwise `--version` says "UNKNOWN".
  CGO_ENABLED=0 go -C "$here" build -trimpath -ldflags "-s -w -X main.VERSION=$version" -o "$out/bin/$name" \
    "$module/cmd/$command"
  say "built $name in $(($(date +%s) - started))s ($(du -h "$out/bin/$name" | cut -f1))"
done
dir=$(go -C "$here" list -m -f '{{.Dir}}' "$module")
install -m 0644 "$dir/helm/sealed-secrets/crds/bitnami.com_sealedsecrets.yaml" "$out/crds/sealed-secrets/"
say "copied the SealedSecret CRD into $out/crds/sealed-secrets"
