#!/usr/bin/env bash
# Builds External Secrets Operator (v0.20.4, from the wrapper module tools/cluster/external-secrets) into
# .tools/cluster/external-secrets (git-ignored), with its CRD bundle beside it: what the local harness
# (gitops_infra/local/_external_secrets.py) runs when a test or a demo asks for External Secrets.
# build.sh runs it; it is skipped while the module's go.mod and go.sum, and this script, are unchanged, on a
# stamp of its own, so a change here rebuilds only this. v0.20.4 is the newest single-module release the
# proxy serves (v1.x splits into sub-modules it does not serve), and already serves external-secrets.io/v1.
# The bundle (deploy/crds/bundle.yaml, as the module ships it) is applied server-side: its CRDs are too big
# for client-side apply's annotation. bench/README.md has what the cold build costs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

here=tools/cluster/external-secrets
out=.tools/cluster/external-secrets
module=github.com/external-secrets/external-secrets
say() { printf 'setup: cluster: %s\n' "$*"; }

want=$(cat "$here/go.mod" "$here/go.sum" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)
if [ -x "$out/external-secrets" ] && [ -f "$out/crds.yaml" ] && [ "$(cat "$out/.setup-stamp" 2>/dev/null)" = "$want" ]; then
  say "reusing external-secrets in $out"
  exit 0
fi

command -v go >/dev/null || { printf 'setup: cluster: error: no Go toolchain to build external-secrets\n' >&2; exit 1; }
mkdir -p "$out"
started=$(date +%s)
say "building external-secrets into $out; a cold build takes about 9 minutes of CPU and 2.6 GB"
CGO_ENABLED=0 go -C "$here" build -trimpath -ldflags "-s -w" -o "$root/$out/external-secrets" "$module"
dir=$(go -C "$here" list -m -f '{{.Dir}}' "$module")
install -m 0644 "$dir/deploy/crds/bundle.yaml" "$out/crds.yaml"
echo "$want" >"$out/.setup-stamp"
say "built external-secrets in $(($(date +%s) - started))s ($(du -h "$out/external-secrets" | cut -f1)), its CRDs in $out/crds.yaml"
