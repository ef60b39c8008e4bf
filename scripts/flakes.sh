#!/usr/bin/env bash
# flakes.sh: hunts flaky tests before CI does.
#
#   scripts/flakes.sh            (or: make flakes)
#
# Runs, through scripts/test.sh (so inside the loopback-only namespace, with
# the pinned real CLI required):
#   1. the fast packages with -race -count=10 -shuffle=on;
#   2. the real-CLI and full-stack packages with -race -count=3.
# Then prints every test that failed at least once, with how many times, and
# exits non-zero if any did. FLAKES_FAST_COUNT and FLAKES_SLOW_COUNT override
# the counts.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# The packages that start the real CLI or the whole bridge; everything else
# is fast enough to run ten times.
slow=(./cmd/untether ./internal/bridge ./internal/bridge/loadtest ./internal/runner ./internal/runner/claudetest)
mapfile -t all < <(go list ./...)
fast=()
for p in "${all[@]}"; do
  rel="./${p#$(go list -m)/}"
  [ "$rel" = "./$(go list -m)" ] && rel="."
  skip=""
  for s in "${slow[@]}"; do [ "$rel" = "$s" ] && skip=1; done
  [ -z "$skip" ] && fast+=("$rel")
done

log="$(mktemp -t untether-flakes.XXXXXX)"
trap 'rm -f "$log"' EXIT
status=0
echo "flakes: fast packages x${FLAKES_FAST_COUNT:-10} (shuffled): ${fast[*]}" >&2
start=$SECONDS
scripts/test.sh -count="${FLAKES_FAST_COUNT:-10}" -shuffle=on "${fast[@]}" 2>&1 | tee -a "$log" || status=1
echo "flakes: fast packages took $((SECONDS - start)) s" >&2
echo "flakes: real-CLI and full-stack packages x${FLAKES_SLOW_COUNT:-3}: ${slow[*]}" >&2
start=$SECONDS
scripts/test.sh -count="${FLAKES_SLOW_COUNT:-3}" -timeout 40m "${slow[@]}" 2>&1 | tee -a "$log" || status=1
echo "flakes: slow packages took $((SECONDS - start)) s" >&2

echo
failed="$(grep -oE -- '--- FAIL: [^ ]+' "$log" | sed 's/--- FAIL: //' | sort | uniq -c | sort -rn)"
if [ -n "$failed" ]; then
  echo "flakes: tests that failed at least once (count, name):"
  echo "$failed"
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "flakes: a run failed without a failing test (build, vet, gofmt, a panic or a timeout); see the output above"
  exit 1
fi
echo "flakes: no test failed"
