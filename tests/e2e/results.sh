#!/usr/bin/env bash
# fswb results: importing real fstests results and check output, listing
# runs and showing one, with the errors a newcomer may hit.
. "$(dirname "$0")/../lib.sh"

FIX=${FSWB_FIXTURES:-$SRCDIR/tests/fixtures/fstests-runs}
if [ ! -d "$FIX/B-mismatch" ]; then
	skip "fstests fixtures" "no fixtures at $FIX"
	done_testing
	exit 0
fi

out=$("$FSWB" results import "$FIX/B-mismatch/results")
check "a results dir gives the summary line" grep -qE '^[a-z0-9_/]+: 2 tests, 1 failures, 0 skipped, [0-9]+ seconds$' <<<"$out"
check "the failure is listed with its .out.bad" grep -q 'B-mismatch/results/generic/002.out.bad' <<<"$out"

json=$("$FSWB" results import "$FIX/B-mismatch/results" --json)
check "--json is run.json" grep -q '"version": 1' <<<"$json"
check "--json has the failed test" grep -q '"status": "fail"' <<<"$json"

out=$("$FSWB" results import "$FIX/A-plain-pass-notrun/stdout.txt")
check "check's stdout imports" grep -qE ': 5 tests, 0 failures, 2 skipped' <<<"$out"
check "not-run causes come with a fix" grep -q 'fix: ' <<<"$out"

# Every fixture imports both ways with the same counts.
for d in "$FIX"/*/; do
	name=$(basename "$d")
	[ -f "$d/stdout.txt" ] && [ -d "$d/results" ] || continue
	a=$("$FSWB" results import "$d/results" | grep -E '^[^ ]+: [0-9]+ tests' | sed 's/, [0-9]* seconds.*//; s/^[^:]*: //')
	b=$("$FSWB" results import "$d/stdout.txt" | grep -E '^[^ ]+: [0-9]+ tests' | sed 's/, [0-9]* seconds.*//; s/^[^:]*: //')
	check "$name: results dir and stdout agree ($a | $b)" test -n "$a" -a "$a" = "$b"
done

err=$("$FSWB" results import "$T/nothing" 2>&1)
rc=$?
check "a missing path exits 2" test "$rc" -eq 2
check "a missing path is named" grep -q "'$T/nothing' does not exist" <<<"$err"

out=$("$FSWB" results)
check "no runs yet says how to start one" grep -q "start one with 'fswb run'" <<<"$out"

# A run directory as the engine leaves it: plan.json and run.json.
mkdir -p "$FSWB_HOME/data/runs/20261203-120000"
echo '{}' >"$FSWB_HOME/data/runs/20261203-120000/plan.json"
"$FSWB" results import "$FIX/B-mismatch/results" --json >"$FSWB_HOME/data/runs/20261203-120000/run.json"
out=$("$FSWB" results)
check "a run is listed with its counts" grep -qE '^20261203-120000 +finished +[a-z0-9_/]+ +1 passed, 1 failed, 0 not run' <<<"$out"
out=$("$FSWB" results show last)
check "show last prints the summary again" grep -qE '^[a-z0-9_/]+: 2 tests, 1 failures' <<<"$out"
check "a run of one guest says nothing of guests" sh -c '! printf "%s" "$1" | grep -q "guests at once"' _ "$out"
err=$("$FSWB" results show 20261203-12000 2>&1)
check "an unknown id suggests the closest" grep -q "did you mean '20261203-120000'" <<<"$err"

# A run on two guests at once: the summary says so, a failure says its guest.
mkdir -p "$FSWB_HOME/data/runs/20261203-130000"
jq '.id = "20261203-130000" | .shards = 2 | .start = "2026-12-03T13:00:00.000Z" |
	.end = "2026-12-03T13:01:05.000Z" |
	.sections[0].tests |= [.[] | .shard = (if .status == "fail" then 2 else 1 end)]' \
	"$FSWB_HOME/data/runs/20261203-120000/run.json" >"$FSWB_HOME/data/runs/20261203-130000/run.json"
out=$("$FSWB" results show 20261203-130000)
check "a sharded run: the guests in the summary" grep -qE '^On 2 guests at once: [0-9]+s of tests in 1m05s\.$' <<<"$out"
check "a sharded run: the failure's guest" grep -qE '^  generic/002  fail \(shard 2\)' <<<"$out"
check "a sharded run: --json keeps the guests" \
	sh -c "'$FSWB' results show 20261203-130000 --json | jq -e '.shards == 2 and ([.sections[0].tests[].shard] | sort) == [1, 2]'"

# a run that failed before its first test, and a shell session (hand-made run directories)
mkdir -p "$FSWB_HOME/data/runs"
cp -r "$SRCDIR/tests/ui/fixtures/failed-runs/"* "$FSWB_HOME/data/runs/"
out=$("$FSWB" results 2>&1)
check "a failed start is 'failed' with its cause" grep -qE '^20261204-090000 +failed +- +the kernel could not be built: .*whole build log$' <<<"$out"
check "a shell session is no test run" grep -qE '^20261204-091500 +shell session +- +no tests run$' <<<"$out"
out=$("$FSWB" results show 20261204-090000 2>&1)
check "results show says why it failed" grep -qF "The run failed before its first test: the kernel could not be built" <<<"$out"
out=$("$FSWB" results show 20261204-091500 2>&1)
check "results show names a shell session" grep -qF "Run 20261204-091500 (shell session: no test ran)" <<<"$out"
out=$("$FSWB" results --json 2>&1)
check "results --json: the kind and the error" sh -c 'jq -e "map(select(.id == \"20261204-091500\"))[0].kind == \"shell session\" and (map(select(.id == \"20261204-090000\"))[0].error | test(\"kernel could not\"))" >/dev/null' <<<"$out"

done_testing
