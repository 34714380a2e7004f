#!/usr/bin/env bash
# The test appliance: a cold build (the real package list, mini-fstests as
# fstests, in a scratch cache), a warm reuse (the same inputs: target under a
# second), and the image's size (apparent, and what it occupies on disk).
set -u
cd "$(dirname "$0")/.."
FSWB=${FSWB_BIN:-$PWD/build/fswb}
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/fswb-bench-appliance.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export FSWB_HOME=$scratch/home FSWB_CACHE_DIR=$scratch/cache
mini=$PWD/tests/fixtures/mini-fstests

ms() { date +%s%3N; }

t0=$(ms)
if ! "$FSWB" appliance build --fstests-src "$mini" >"$scratch/cold.log" 2>&1; then
	echo "appliance: the cold build failed:"
	tail -5 "$scratch/cold.log"
	exit 1
fi
t1=$(ms)
"$FSWB" appliance build --fstests-src "$mini" >"$scratch/warm.log" 2>&1 || exit 1
t2=$(ms)
info=$("$FSWB" appliance list --json | jq -r '.[0] | "\(.image_size) \(.image_used) \(.tool)"')
read -r size used tool <<<"$info"
warm=$((t2 - t1))
printf 'appliance: cold build %.1f s (%s), warm reuse %d ms (target < 1000 ms: %s)\n' \
	"$(echo "($t1 - $t0) / 1000" | bc -l)" "$tool" "$warm" \
	"$([ "$warm" -lt 1000 ] && echo met || echo MISSED)"
printf 'appliance: image %d MiB apparent, %d MiB on disk\n' $((size >> 20)) $((used >> 20))
