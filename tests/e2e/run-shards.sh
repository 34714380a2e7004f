#!/usr/bin/env bash
# fswb run --shards 2 end to end: two real QEMU guests (TCG here) at once,
# booting the installed kernel and an appliance built with mini-fstests,
# taking batches of one queue: every test once in one merged run, each with
# the guest that ran it, and nothing left behind.
. "$(dirname "$0")/../lib.sh"

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests

need_guest "fswb run on two guests"

qemus() { pgrep -f "qemu-system-x86_64.*$FSWB_HOME" | wc -l; }
runs_dir=$FSWB_HOME/data/runs
last_run() { ls -d "$runs_dir"/*/ 2>/dev/null | sort | tail -1; }
why() { tail -n 3 "$T/err" 2>/dev/null | tr '\n' ' '; }

TESTS="generic/001 generic/002 generic/003 generic/005 generic/006 generic/012"
# shellcheck disable=SC2086 # the test names are words
"$FSWB" run -c ext4/4k --fstests-src "$MINI" --shards 2 --cpus 1 $TESTS \
	>"$T/out" 2>"$T/err" &
pid=$!
most=0
while kill -0 "$pid" 2>/dev/null; do
	n=$(qemus)
	[ "$n" -gt "$most" ] && most=$n
	sleep 1
done
wait "$pid"
rc=$?
run=$(last_run)
check "a run with a failure exits 1 (rc=$rc; $(why))" test "$rc" -eq 1
check "two guests ran at once (at most $most seen)" test "$most" -eq 2
check "the output says how many guests and why" grep -q '^fswb: on 2 guests at once: ' "$T/out"
check "each test line names its guest" grep -qE '^\[1\] generic/' "$T/out"
check "... both guests" grep -qE '^\[2\] generic/' "$T/out"
check "generic/006 fails on its output" grep -qE '^\[[12]\] generic/006 +fail .*output mismatch' "$T/out"
check "the summary gives the guests" grep -q 'On 2 guests at once' "$T/out"
check "run.json says two shards" grep -q '"shards": 2' "$run/run.json"
for t in $TESTS; do
	check "run.json has $t once, with its guest" \
		test "$(grep -cE "\"test\": \"$t\"" "$run/run.json")" -eq 1
done
check "run.json gives each test its shard" \
	test "$(grep -cE '"shard": [12]' "$run/run.json")" -eq 6
check "both shards ran tests" sh -c "grep -q '\"shard\": 1' '$run/run.json' && grep -q '\"shard\": 2' '$run/run.json'"
check "junit.xml is well-formed XML" xmllint --noout "$run/junit.xml"
check "junit.xml has one testsuite for the configuration" \
	test "$(grep -cE '<testsuite( |$)' "$run/junit.xml")" -eq 1
check "the merged results have the failure's .out.bad" \
	test -s "$run/results/ext4-4k/generic/006.out.bad"
check "one check.log names every test" \
	sh -c "for t in $TESTS; do grep -q \"\$t\" '$run/results/ext4-4k/check.log' || exit 1; done"
check "each guest's serial console is kept" test -s "$run/console-1.log" -a -s "$run/console-2.log"
check "no guest is left running" test "$(qemus)" -eq 0
check "no guest directory is left" sh -c "! ls -d '$run'/guest-* '$run'/unpack-* 2>/dev/null | grep -q ."
check "no lease is left" sh -c "! ls '$FSWB_HOME/data/leases/' 2>/dev/null | grep -q ."
done_testing
