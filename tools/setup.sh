#!/usr/bin/env bash
# One idempotent setup for gitops-infra; both README commands run it first.
#
#   tools/setup.sh          every step below (what `make demo` and `make bench` need)
#   tools/setup.sh python   step 1 only (what the offline plan, `make plan`, needs)
#   tools/setup.sh base     every step but 3
#   tools/setup.sh cluster  step 3 only; `cluster-core` and `cluster-extras` its two parts (`make test`
#                           runs them beside `base`, and the lanes that do not need them beside the rest
#                           of them: tools/test.sh)
#
#   1. .venv with `pip install -e '.[dev]'` (skipped while pyproject.toml is unchanged);
#      1b. .venv-floor: the same, on the lowest pulumi pyproject.toml allows, for the unit tests;
#   2. the Pulumi engine: a `pulumi` already on PATH when its version is in the supported range,
#      otherwise the pinned CLI and Python language host built from tools/pulumi into .tools/pulumi/bin
#      (skipped while the go.mod and go.sum files under tools/pulumi are unchanged). Go's module and
#      build caches are left in place, so a rebuild after a pin change only compiles what changed;
#   3. the local cluster's toolchain (tools/cluster/build.sh): etcd, kube-apiserver,
#      kube-controller-manager, kube-scheduler, kwok and its stages (so that pods run), Flux 2.9.4's six
#      controllers and their CRDs, External Secrets Operator and its CRDs, pulumi-resource-kubernetes,
#      and Debian's openssh-server for the fleet repository the cluster tests serve (built the same way);
#   4. actionlint, the workflow linter `make lint` runs on examples/ci, built from the Go module proxy
#      into .tools/actionlint/bin (skipped while the pinned version is the one built).
#
# Prints one line per step saying what it did.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

venv=.venv
tools=.tools/pulumi
bin=$tools/bin
# The Python provider SDKs need an engine at least this new; 4.x is a different major.
min_pulumi=3.231.0
max_pulumi_exclusive=4.0.0

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }
fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }
# version_in_range V: true when min_pulumi <= V < max_pulumi_exclusive.
version_in_range() {
  local v=${1#v}
  [ "$(printf '%s\n%s\n' "$min_pulumi" "$v" | sort -V | head -n1)" = "$min_pulumi" ] &&
    [ "$(printf '%s\n%s\n' "$v" "$max_pulumi_exclusive" | sort -V | head -n1)" = "$v" ] &&
    [ "$v" != "$max_pulumi_exclusive" ]
}

mode=${1:-all}
case "$mode" in
  all | python | base | cluster | cluster-core | cluster-extras) ;;
  *) die "unknown step '$mode': expected python, base, cluster, cluster-core or cluster-extras (or nothing, for every step)" ;;
esac

# --- 3, begun first: the local cluster's toolchain -----------------------------------------------------
# The longest step, and it needs nothing the others make, so it builds beside steps 1 and 2 (a Go build
# links on one core and pip waits on the network: together they keep both cores busy). Its lines are
# kept in a log and printed, whole, where step 3 stands; stopping setup stops it.
case "$mode" in
  cluster | cluster-core | cluster-extras)
    part=${mode#cluster}
    bash tools/cluster/build.sh ${part#-} ||
      die "the local cluster's toolchain did not build (tools/cluster/build.sh${part/-/ }; its output is above)"
    exit 0
    ;;
esac
cluster_pid=
if [ "$mode" = all ]; then
  mkdir -p .tools
  cluster_log=$(mktemp .tools/cluster-build.XXXXXX)
  # Job control makes the build a process group of its own, which the trap stops whole (macOS has no setsid).
  set -m
  bash tools/cluster/build.sh >"$cluster_log" 2>&1 &
  cluster_pid=$!
  set +m
  trap "kill -- -$cluster_pid 2>/dev/null || true; rm -f '$cluster_log'" EXIT
fi

# --- 1. Python environment -----------------------------------------------------------------------
python=${PYTHON:-python3}
command -v "$python" >/dev/null || die "no '$python' on PATH; install Python 3.11 or newer"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
  die "$("$python" --version 2>&1) is too old; gitops-infra needs Python 3.11 or newer"

want=$(fingerprint pyproject.toml)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.setup-stamp" 2>/dev/null)" = "$want" ]; then
  say "python: $venv is up to date ($("$venv/bin/python" --version))"
else
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  # PYTHONWARNINGS: setuptools warns about every editable install; the warning says nothing here.
  PYTHONWARNINGS=ignore "$venv/bin/python" -m pip install --quiet -e '.[dev]'
  echo "$want" >"$venv/.setup-stamp"
  say "python: installed gitops-infra and its dev extras into $venv"
fi

# The offline plan needs only the Python side: `tools/setup.sh python` stops here.
if [ "$mode" = python ]; then
  exit 0
fi

# --- 1b. The same package on the lowest pulumi pyproject.toml allows --------------------------------
# So the range `pulumi>=X` promises is tested: the unit tests run here too (make test-floor).
floor_venv=.venv-floor
floor=$(sed -n 's/^ *"pulumi>=\([0-9.]*\),.*/\1/p' pyproject.toml | head -n1)
[ -n "$floor" ] || die "no pulumi floor (\"pulumi>=X,...\") found in pyproject.toml"
want=$(printf '%s\n%s' "$floor" "$(fingerprint pyproject.toml)" | sha256sum | cut -d' ' -f1)
if [ -x "$floor_venv/bin/python" ] && [ "$(cat "$floor_venv/.setup-stamp" 2>/dev/null)" = "$want" ]; then
  say "python: $floor_venv is up to date (pulumi $floor)"
else
  [ -x "$floor_venv/bin/python" ] || "$python" -m venv "$floor_venv"
  "$floor_venv/bin/python" -m pip install --quiet --upgrade pip
  PYTHONWARNINGS=ignore "$floor_venv/bin/python" -m pip install --quiet "pulumi==$floor.0" -e '.[dev]'
  echo "$want" >"$floor_venv/.setup-stamp"
  say "python: installed gitops-infra with the lowest allowed pulumi ($floor) into $floor_venv"
fi

# --- 2. The Pulumi engine --------------------------------------------------------------------------
# The CLI's release: the version of pkg/v3 that tools/pulumi/go.mod requires.
pinned=$(awk '{ for (i = 1; i < NF; i++) if ($i == "github.com/pulumi/pulumi/pkg/v3") { print $(i + 1); exit } }' \
  tools/pulumi/go.mod)
want=$(fingerprint tools/pulumi/go.mod tools/pulumi/go.sum tools/pulumi/language-python/go.mod \
  tools/pulumi/language-python/go.sum)

setup_engine() {
if [ -x "$bin/pulumi" ] && [ -x "$bin/pulumi-language-python" ] &&
  [ "$(cat "$tools/.setup-stamp" 2>/dev/null)" = "$want" ]; then
  say "pulumi: reusing the built $("$bin/pulumi" version) in $bin"
  return 0
fi

if ambient=$(command -v pulumi 2>/dev/null) && ambient_version=$(pulumi version 2>/dev/null) &&
  version_in_range "$ambient_version" && command -v pulumi-language-python >/dev/null; then
  say "pulumi: using $ambient ($ambient_version) from PATH; nothing to build"
  return 0
fi

if ! command -v go >/dev/null; then
  die "no suitable Pulumi CLI (>= $min_pulumi, < $max_pulumi_exclusive) on PATH, and no Go toolchain to build $pinned.
  Install Pulumi the official way (https://www.pulumi.com/docs/install/), or install Go 1.26+ and rerun setup."
fi

say "pulumi: building $pinned (CLI and Python language host) into $bin; a cold build takes several minutes"
start=$(date +%s)
mkdir -p "$bin"
# The language host module has no version tags, so it is pinned by pseudo-version, which the checksum
# database does not list; go.sum in tools/pulumi records its hash instead.
export GONOSUMDB=github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python
go -C tools/pulumi build -trimpath \
  -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$pinned" \
  -o "$root/$bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
# The language host is its own module: it compiles against the sdk/v3 of its own release.
go -C tools/pulumi/language-python build -trimpath \
  -o "$root/$bin/pulumi-language-python" github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3

# The language host runs the program through a script shipped in the sdk/v3 module, and dynamic
# providers are served by another; both must sit beside the binaries.
sdk_dir=$(go -C tools/pulumi list -m -f '{{.Dir}}' github.com/pulumi/pulumi/sdk/v3)
install -m 0755 "$sdk_dir/python/cmd/pulumi-language-python-exec" "$bin/"
install -m 0755 "$sdk_dir/python/dist/pulumi-resource-pulumi-python" "$bin/"

echo "$want" >"$tools/.setup-stamp"
say "pulumi: built $("$bin/pulumi" version) in $(($(date +%s) - start))s; $(du -sh "$bin" | cut -f1) in $bin"
}
setup_engine

# --- 3. The local cluster's toolchain, and sshd for its fleet repository ------------------------------
# The real-Kubernetes tests (tests/cluster) and `make demo` need them: see tools/cluster/build.sh.
if [ -n "$cluster_pid" ]; then
  if wait "$cluster_pid"; then
    cat "$cluster_log"
  else
    cat "$cluster_log" >&2
    die "the local cluster's toolchain did not build (tools/cluster/build.sh; its output is above)"
  fi
  rm -f "$cluster_log"
  trap - EXIT
fi

# --- 4. actionlint, for the example CI workflow (make lint) -------------------------------------------
actionlint_version=v1.7.12
actionlint_bin=.tools/actionlint/bin
if [ -x "$actionlint_bin/actionlint" ] && [ "$("$actionlint_bin/actionlint" -version | head -n1)" = "$actionlint_version" ]; then
  say "actionlint: reusing $actionlint_version in $actionlint_bin"
else
  command -v go >/dev/null || die "no Go toolchain to build actionlint $actionlint_version; install Go 1.26+"
  GOBIN="$root/$actionlint_bin" go install "github.com/rhysd/actionlint/cmd/actionlint@$actionlint_version"
  say "actionlint: built $actionlint_version into $actionlint_bin"
fi
