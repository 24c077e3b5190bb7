#!/usr/bin/env bash
# `make test`: setup, lint and the three test lanes, with the local cluster's toolchain built beside the
# lanes that do not need it.
#
# On a fresh machine the toolchain (tools/cluster/build.sh) is most of setup, and only the cluster lane
# needs it. So it builds first, in the background, while setup's other steps run; then lint, the floor
# lane and the engine, install and unit lane run beside the rest of the build, at a lower priority (nice),
# so they take only the cores the build leaves idle (a Go build links on one core) and the build, which
# the cluster lane waits for, is not slowed. Once it is built, and setup's other steps are done (its tests
# run the engine), the cluster lane runs. With the toolchain built already, the build step takes seconds
# and the cluster lane starts at once, ahead of the others on the CPU for the same reason: it is the
# longest lane.
#
# Each lane's report is printed whole when the lanes are done (as make -O did); the exit status is
# non-zero when setup, lint or any lane failed. The run's duration is recorded in .tools/make-test.json:
# setup_s, the seconds until everything setup built was ready, and make_test_s, the whole run.
#
# The cluster tier runs in two lanes, the core's and the extras' (Makefile: test-lane-cluster-core and
# -extras, by the marker `extra`), so that on a cold machine its longest part starts while the rest of the
# toolchain still builds.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
make=${MAKE:-make}
start=$(date +%s)
mkdir -p .tools
logs=$(mktemp -d .tools/test-run.XXXXXX)
jobs_started=()
cleanup() {
  for pid in "${jobs_started[@]}"; do kill -- -"$pid" 2>/dev/null || true; done
  rm -rf "$logs"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Job control: each background job is a process group of its own, which cleanup stops whole. The cluster
# job builds the toolchain's core (what every local cluster runs) and then its extras (what some cluster
# tests start on request: tools/cluster/build.sh), and runs the cluster tier in two lanes: the core's tests
# as soon as the core is built, while the extras build, and the extras' tests once they are built, beside
# the core's (each lane its own pytest session, with a cluster of its own). Both wait for the base setup
# too: their tests run the engine and the venv. Each lane's exit status is left in a file.
set -m
(
  bash tools/setup.sh cluster-core >"$logs/cluster-setup" 2>&1 || exit 3
  date +%s >"$logs/cluster-ready"
  (
    if ! bash tools/setup.sh cluster-extras >"$logs/extras-setup" 2>&1; then
      echo 3 >"$logs/extras-rc"
      exit 0
    fi
    date +%s >"$logs/extras-ready"
    until [ -e "$logs/base-ready" ]; do sleep 1; done
    $make --no-print-directory test-lane-cluster-extras >"$logs/cluster-extras" 2>&1
    echo $? >"$logs/extras-rc"
  ) &
  until [ -e "$logs/base-ready" ]; do sleep 1; done
  $make --no-print-directory test-lane-cluster-core >"$logs/cluster" 2>&1
  echo $? >"$logs/core-rc"
  wait
) &
cluster=$!
jobs_started+=("$cluster")
set +m

if ! bash tools/setup.sh base; then
  echo "test: setup failed (its output is above)" >&2
  exit 1
fi
date +%s >"$logs/base-ready"
failed=()
$make --no-print-directory lint || failed+=("lint")

set -m
nice -n 10 $make --no-print-directory test-lane-engine >"$logs/engine" 2>&1 &
engine=$!
nice -n 10 $make --no-print-directory test-floor >"$logs/floor" 2>&1 &
floor=$!
jobs_started+=("$engine" "$floor")
set +m

wait "$cluster"
case $? in
  0) ;;
  3) failed+=("the local cluster's toolchain (tools/cluster/build.sh core), so the cluster lanes did not run") ;;
  *) failed+=("the cluster job") ;;
esac
case $(cat "$logs/core-rc" 2>/dev/null) in
  0 | "") ;;
  *) failed+=("cluster (core)") ;;
esac
case $(cat "$logs/extras-rc" 2>/dev/null) in
  0) ;;
  3) failed+=("the local cluster's extras (tools/cluster/build.sh extras), so their cluster tests did not run") ;;
  "") [ -e "$logs/cluster-ready" ] && failed+=("cluster (extras): no result") ;;
  *) failed+=("cluster (extras)") ;;
esac
wait "$engine" || failed+=("engine, install and unit")
wait "$floor" || failed+=("floor")
jobs_started=()

for log in cluster-setup extras-setup cluster cluster-extras engine floor; do
  [ -f "$logs/$log" ] && cat "$logs/$log"
done
if [ "${#failed[@]}" -gt 0 ]; then
  for what in "${failed[@]}"; do echo "test: failed: $what" >&2; done
  exit 1
fi
ready=$(cat "$logs/base-ready" "$logs/cluster-ready" "$logs/extras-ready" | sort -n | tail -n1)
printf '{"finished_at": "%s", "setup_s": %d, "make_test_s": %d}\n' "$(date -u +%FT%TZ)" \
  $((ready - start)) $(($(date +%s) - start)) >.tools/make-test.json
