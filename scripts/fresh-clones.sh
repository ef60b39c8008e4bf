#!/usr/bin/env bash
# fresh-clones.sh: what a new user sees, several times in a row.
#
#   scripts/fresh-clones.sh [N]       (or: make flakes-fresh, N=5 by default)
#
# Clones the committed HEAD of this repository into a new temporary
# directory N times and runs the README's test command (scripts/test.sh) in
# each clone, from nothing: the Claude CLI is installed into the clone's own
# .tools/ and the test cache is not reused. Prints each run's time and
# result, and exits non-zero if any run failed. Uncommitted changes are not
# part of a clone: commit first. FRESH_KEEP=1 keeps the clones and logs.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-5}"
head="$(git -C "$root" rev-parse --short=12 HEAD)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  echo "fresh-clones: note: uncommitted changes are not tested; the clones have $head" >&2
fi
work="$(mktemp -d -t untether-fresh.XXXXXX)"
[ -n "${FRESH_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
failed=0
summary=()
for i in $(seq 1 "$runs"); do
  dir="$work/clone-$i"
  # Every run tests the commit the first one did, even if main moves on meanwhile.
  { git clone -q "$root" "$dir" && git -C "$dir" checkout -q --detach "$head"; } || { echo "fresh-clones: git clone failed" >&2; exit 1; }
  echo "fresh-clones: run $i of $runs in $dir ($head)" >&2
  start=$SECONDS
  # A fresh clone as a new user has it: no CLI given (test.sh never uses the test cache).
  (cd "$dir" && env -u UNTETHER_CLAUDE_BIN scripts/test.sh) >"$work/run-$i.log" 2>&1
  status=$?
  took=$((SECONDS - start))
  if [ "$status" -eq 0 ]; then
    summary+=("run $i: ok in ${took} s")
  else
    failed=$((failed + 1))
    summary+=("run $i: FAILED (exit $status) in ${took} s; failing tests: $(grep -oE -- '--- FAIL: [^ ]+' "$work/run-$i.log" | sed 's/--- FAIL: //' | sort -u | tr '\n' ' ')")
    tail -40 "$work/run-$i.log" >&2
  fi
  echo "fresh-clones: ${summary[-1]}" >&2
  [ -n "${FRESH_KEEP:-}" ] || rm -rf "$dir"
done
echo
echo "fresh-clones: $head, $runs fresh clones:"
printf '  %s\n' "${summary[@]}"
[ "$failed" -eq 0 ]
