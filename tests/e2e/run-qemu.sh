#!/usr/bin/env bash
# fswb run end to end: real QEMU guests (TCG here) booting the installed
# kernel and an appliance built with mini-fstests, from plan to results:
# passes, a not-run, failures of each kind, a kernel panic, a hung test, an
# interrupted run, --json, the run directory, and nothing left behind.
. "$(dirname "$0")/../lib.sh"

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests

need_guest "fswb run in a guest"

qemus() { pgrep -f "qemu-system-x86_64.*$FSWB_HOME" | wc -l; }
runs_dir=$FSWB_HOME/data/runs
last_run() { ls -d "$runs_dir"/*/ 2>/dev/null | sort | tail -1; }
# the end of the last run's stderr, for a failing check's name
why() { tail -n 3 "$T/err" 2>/dev/null | tr '\n' ' '; }

# 1. A mixed run: pass, pass, a device-mapper test, not run, output mismatch,
# dmesg warning.
out=$("$FSWB" run -c ext4/4k --fstests-src "$MINI" \
	generic/001 generic/002 generic/004 generic/005 generic/006 generic/008 2>"$T/err")
rc=$?
printf '%s\n' "$out" >"$T/out1"
check "a run with failures exits 1 (rc=$rc; $(tail -3 "$T/err" | tr '\n' ' '))" test "$rc" -eq 1
check "generic/001 passes" grep -qE '^generic/001 +pass +[0-9]+s' "$T/out1"
check "generic/002 passes" grep -qE '^generic/002 +pass ' "$T/out1"
check "generic/004 passes: the guest has LOGWRITES_DEV, and udevd makes its dm node" \
	grep -qE '^generic/004 +pass ' "$T/out1"
check "generic/005 is not run, with check's reason" grep -qE '^generic/005 +notrun .*absent-tool' "$T/out1"
check "generic/006 fails on its output" grep -qE '^generic/006 +fail .*output mismatch' "$T/out1"
check "generic/008 fails on dmesg" grep -qE '^generic/008 +fail .*dmesg' "$T/out1"
check "the summary has the xfstests-bld shape" \
	grep -qE '^ext4/4k: 6 tests, 2 failures, 1 skipped, [0-9]+ seconds$' "$T/out1"
check "the failures are listed" grep -q '^Failures on ext4/4k:' "$T/out1"
check "the not-run cause comes with a fix" grep -qA3 '^Not run on ext4/4k' "$T/out1"
check "TCG is announced when KVM does not work" \
	sh -c "grep -q 'KVM' '$T/err' || test -w /dev/kvm"
run=$(last_run)
check "the run directory has plan.json" test -s "$run/plan.json"
check "run.json has the six tests" test "$(grep -c '"test": "generic/' "$run/run.json")" -eq 6
check "run.json says finished" grep -q '"finished": true' "$run/run.json"
check "junit.xml is well-formed XML" xmllint --noout "$run/junit.xml"
if [ -n "${FSWB_FSTESTS_SRC:-}" ] && [ -f "$FSWB_FSTESTS_SRC/doc/xunit.xsd" ]; then
	check "junit.xml validates against fstests' xunit.xsd" \
		xmllint --noout --schema "$FSWB_FSTESTS_SRC/doc/xunit.xsd" "$run/junit.xml"
fi
check "console.log holds the boot" grep -q 'Linux version' "$run/console.log"
check "kernel.log holds the warning" grep -q 'WARNING:' "$run/kernel.log"
check "the mismatch's .out.bad is kept" test -s "$run/results/ext4-4k/generic/006.out.bad"
check "the test's kernel-log slice is kept" sh -c "grep -rq 'WARNING:' '$run/results/ext4-4k/generic/'*008*kmsg*"
check "events.jsonl ends with run_end" sh -c "tail -1 '$run/events.jsonl' | grep -q '\"event\":\"run_end\"'"
check "no QEMU is left running" test "$(qemus)" -eq 0
check "no guest files are left" sh -c "! ls -d '$run'/guest-* 2>/dev/null"
out=$("$FSWB" results show last)
check "fswb results show prints the summary again" grep -qE '^ext4/4k: 6 tests, 2 failures' <<<"$out"

# 2. --json: one event per line; a test's end carries test, status and seconds.
# An ext4 test is left out of an xfs configuration, which then has nothing to
# run and boots no guest.
"$FSWB" run --json -c xfs/4k,ext4/4k --fstests-src "$MINI" ext4/001 >"$T/json" 2>"$T/err"
rc=$?
check "an all-pass run exits 0 (rc=$rc; $(why))" test "$rc" -eq 0
check "every line is a JSON object" sh -c "! grep -v '^{.*}\$' '$T/json'"
check "test_end has test, status and seconds" \
	grep -qE '"event":"test_end".*"test":"ext4/001","status":"pass","seconds":[0-9]' "$T/json"
check "a configuration of another filesystem is left with nothing to run" \
	grep -q '"warning".*xfs/4k: nothing to run: the tests named (ext4/001) are not for xfs' \
	"$T/json"
check "and it boots no guest" sh -c "! grep -q '\"stage_begin\".*\"config\":\"xfs/4k\"' '$T/json'"

# 3. A kernel panic in a test: that test is crashed, a new guest runs the rest.
# (check runs tests in sorted order: generic/012 comes after the panic)
out=$("$FSWB" run -c ext4/4k --fstests-src "$MINI" generic/010 generic/012 2>"$T/err")
rc=$?
check "a panic exits 1 (rc=$rc; $(why))" test "$rc" -eq 1
check "the panicking test is crashed" grep -qE '^generic/010 +crashed' <<<"$out"
check "the crash names the panic" grep -q 'panic' <<<"$out"
check "a new guest is started for the remaining tests" grep -q 'new guest for the remaining tests' "$T/err"
check "the test after the panic still runs and passes" grep -qE '^generic/012 +pass ' <<<"$out"
check "the summary counts both" grep -qE '^ext4/4k: 2 tests, 1 failures' <<<"$out"
run=$(last_run)
check "run.json has each test once" test "$(grep -c '"test": "generic/0' "$run/run.json")" -eq 2
check "the crashed test keeps the console tail" grep -q 'Kernel panic' "$run/run.json"
check "no QEMU is left after a crash" test "$(qemus)" -eq 0

# 4. A test that hangs: stopped at the test timeout, recorded as hung; with
# --stop-on-crash the configuration's remaining tests are not run.
out=$("$FSWB" run -c ext4/4k --fstests-src "$MINI" --test-timeout 20 --stop-on-crash \
	generic/011 generic/012 2>"$T/err")
rc=$?
check "a hang exits 1 (rc=$rc; $(why))" test "$rc" -eq 1
check "the hanging test is hung" grep -qE '^generic/011 +hung' <<<"$out"
check "--stop-on-crash starts no new guest" sh -c "! grep -q 'new guest' '$T/err'"
printf '%s\n' "$out" >"$T/out4"
check "--stop-on-crash: the test after it did not run" sh -c "! grep -q '^generic/012' '$T/out4'"
check "no QEMU is left after a hang" test "$(qemus)" -eq 0

# 5. Ctrl-C in the middle: a clean stop, a run directory that says so.
"$FSWB" run -c ext4/4k --fstests-src "$MINI" generic/012 generic/001 >"$T/int" 2>&1 &
pid=$!
# Ctrl-C once generic/012 has started in the guest (its test_start event)
for _ in $(seq 1 600); do
	r=$(last_run)
	[ -n "$r" ] && grep -q '"event":"test_start".*"generic/012"' "$r/events.jsonl" 2>/dev/null && break
	sleep 0.5
done
kill -INT "$pid"
wait "$pid"
rc=$?
run=$(last_run)
check "a stopped run exits 130 (rc=$rc; $(why))" test "$rc" -eq 130
check "run.json says interrupted" grep -q '"interrupted": true' "$run/run.json"
check "the summary says who stopped it" grep -q '^Stopped by you' "$T/int"
check "... and which test it cut off, after how long" \
	grep -qE '^ext4/4k: generic/012 was interrupted after [0-9]' "$T/int"
check "run.json keeps the cut-off test with its time" grep -q '"stopped": \[' "$run/run.json"
check "no QEMU is left after Ctrl-C" test "$(qemus)" -eq 0
check "no guest files are left after Ctrl-C" sh -c "! ls -d '$run'/guest-* 2>/dev/null"

# 6. --shell: after the tests, a shell in that guest on the terminal (here
# its stdin is a pipe of commands); the shell's end powers the guest off.
out=$(printf 'echo hi-from-$((6*7)); . "$HOST_OPTIONS"; echo "dev=$TEST_DEV"; exit\n' |
	"$FSWB" run --shell -c ext4/4k --fstests-src "$MINI" generic/001 2>"$T/err")
rc=$?
check "run --shell exits 0 after a passing test (rc=$rc; $(why))" test "$rc" -eq 0
check "the test ran before the shell" grep -qE '^generic/001 +pass ' <<<"$out"
check "the shell ran the commands in the guest" grep -q 'hi-from-42' <<<"$out"
check "the shell has the run's local.config" grep -q 'dev=/dev/vdb' <<<"$out"
check "the shell's end is seen" grep -q 'leaving the guest' <<<"$out"
check "no QEMU is left after the shell" test "$(qemus)" -eq 0

# 7. fswb shell: a guest made ready, check -n says what would run, then a shell.
out=$(printf 'exit\n' | "$FSWB" shell -c ext4/4k --fstests-src "$MINI" -g quick 2>"$T/err")
rc=$?
check "fswb shell exits 0 (rc=$rc; $(why))" test "$rc" -eq 0
check "fswb shell lists the tests the plan selects" grep -qx 'generic/001' <<<"$out"
printf '%s\n' "$out" >"$T/out7"
check "fswb shell runs none of them" sh -c "! grep -qE '^generic/001 +pass' '$T/out7'"
check "no QEMU is left after fswb shell" test "$(qemus)" -eq 0

# 8. Nothing can run: a bad kernel path is named, and the exit status is 2.
err=$("$FSWB" run --kernel /nonexistent/bzImage --fstests-src "$MINI" 2>&1)
rc=$?
check "a missing kernel exits 2 (rc=$rc; $(why))" test "$rc" -eq 2
check "a missing kernel is named" grep -q "/nonexistent/bzImage" <<<"$err"

done_testing
