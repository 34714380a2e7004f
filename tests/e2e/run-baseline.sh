#!/usr/bin/env bash
# fswb run against a baseline, in real QEMU guests (TCG here) with
# mini-fstests: a run made the baseline, then a run with --fail-on
# regressions and --rerun-failures (check -L) that has an expected failure
# and a regression, then one with only the expected failure.
. "$(dirname "$0")/../lib.sh"

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests

for tool in qemu-system-x86_64 qemu-img mmdebstrap; do
	if ! command -v $tool >/dev/null 2>&1; then
		skip "fswb run against a baseline" "$tool is not installed (make deps)"
		done_testing
		exit 0
	fi
done
if ! ls /boot/vmlinuz-* >/dev/null 2>&1; then
	skip "fswb run against a baseline" "no kernel in /boot (make deps installs one)"
	done_testing
	exit 0
fi
runs_dir=$FSWB_HOME/data/runs
last_run() { ls -d "$runs_dir"/*/ 2>/dev/null | sort | tail -1; }

# 1. The baseline: generic/006 fails (output mismatch), generic/001 passes.
"$FSWB" run -c ext4/4k --fstests-src "$MINI" generic/001 generic/006 >"$T/out1" 2>"$T/err"
check "the baseline run fails generic/006 (rc=$?; $(tail -2 "$T/err" | tr '\n' ' '))" \
	grep -qE '^generic/006 +fail ' "$T/out1"
first=$(basename "$(last_run)")
check "baseline set" "$FSWB" results baseline set last

# 2. generic/006 again (expected) and generic/008 (dmesg: a regression), each
# failure run twice more.
"$FSWB" run -c ext4/4k --fstests-src "$MINI" --fail-on regressions --rerun-failures 2 \
	generic/006 generic/008 >"$T/out2" 2>"$T/err"
rc=$?
run=$(last_run)
check "a regression exits 1 with --fail-on regressions (rc=$rc)" test "$rc" -eq 1
check "the summary names the baseline" grep -q "^Baseline of ext4/4k on .*: run $first\$" "$T/out2"
check "generic/008 is the regression" grep -qE '^  ext4/4k +generic/008 +fail \(baseline: not there\)$' "$T/out2"
check "generic/006 is expected, first seen in the baseline run" \
	grep -qE "^  ext4/4k +generic/006 +first seen in run $first\$" "$T/out2"
check "the reruns are counted" grep -q '^      ran 3 times: 0 passed, 3 failed$' "$T/out2"
check "check ran generic/006 three times (-L 2)" \
	test "$(grep -c '<testcase classname="xfstests.[^"]*" name="generic/006"' "$run/junit.xml")" -eq 3
check "junit.xml is well-formed" xmllint --noout "$run/junit.xml"
check "run.json has the regressions" \
	sh -c "jq -e '.baseline.regressions[0].test == \"generic/008\"' '$run/run.json'"
check "run.json keeps every iteration" \
	sh -c "jq -e '[.sections[0].tests[] | select(.test == \"generic/006\") | .iterations | length] == [3]' '$run/run.json'"
check "run.json still reads" "$FSWB" results show last

# 3. Only the expected failure: exit 0 with --fail-on regressions.
"$FSWB" run -c ext4/4k --fstests-src "$MINI" --fail-on regressions generic/006 >"$T/out3" 2>"$T/err"
rc=$?
check "only expected failures exit 0 (rc=$rc; $(tail -2 "$T/err" | tr '\n' ' '))" test "$rc" -eq 0
check "... and say there is no regression" grep -q '^No regressions.$' "$T/out3"
"$FSWB" run -c ext4/4k --fstests-src "$MINI" generic/006 >/dev/null 2>&1
check "without --fail-on the failure exits 1" test $? -eq 1
done_testing
