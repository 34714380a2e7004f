#!/usr/bin/env bash
# The libvirt backend end to end, against real libvirt: URIs refused at plan
# time, a daemon that is not there, a whole mini-fstests run through
# qemu:///embed (no daemon) after a killed fswb whose domain that run
# removes, a run through qemu:///system of a private libvirtd and virtlogd
# with a domain destroyed from outside in the middle of a test (crashed, and
# the run goes on), and a killed fswb whose domain goes with its
# connection. TCG guests (-o accel=tcg), the installed kernel.
. "$(dirname "$0")/../lib.sh"

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests
need_guest "fswb run on the libvirt backend"
. "$(dirname "$0")/libvirtd-lib.sh"

runs_dir=$FSWB_HOME/data/runs
# the run made last (runs started in the same second sort by suffix, not by time)
last_run() { ls -td "$runs_dir"/*/ 2>/dev/null | head -1; }
why() { tail -n 3 "$T/err" 2>/dev/null | tr '\n' ' '; }
EMBED=$T/embed
qemus() { pgrep -f "qemu-system-x86_64.*fswb-" | wc -l; }
# no QEMU of fswb's within 10 s (a daemon reaps a stopped domain's QEMU after the event)
no_qemu() {
	for _ in $(seq 1 50); do [ "$(qemus)" -eq 0 ] && return 0; sleep 0.2; done
	pgrep -af "qemu-system-x86_64.*fswb-" | cut -c1-200
	return 1
}
# wait_test_start BEFORE TEST: a run other than BEFORE (the last run before
# it started) has started TEST: its domain exists
wait_test_start() {
	local r before=$1
	shift
	for _ in $(seq 1 900); do
		r=$(last_run)
		[ -n "$r" ] && [ "$r" != "$before" ] &&
			grep -q "\"event\":\"test_start\".*\"$1\"" "$r/events.jsonl" 2>/dev/null &&
			return 0
		sleep 0.2
	done
	return 1
}

# kill_mid_test URI: a run of generic/012 on URI, fswb killed (SIGKILL) once it started
kill_mid_test() {
	local before pid
	before=$(last_run)
	"$FSWB" run --backend libvirt -o "uri=$1" -o accel=tcg -c ext4/4k --fstests-src "$MINI" \
		generic/012 >/dev/null 2>&1 &
	pid=$!
	wait_test_start "$before" generic/012
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
}

# 1. URIs are checked at plan time, each with what to give instead.
err=$("$FSWB" run -n --backend libvirt -o uri=qemu+tcp://box/system \
	--fstests-src "$MINI" generic/001 2>&1)
check "a remote URI other than qemu+ssh is refused, saying what to do" \
	grep -q "remote libvirt over ssh only: qemu+ssh://USER@HOST/system" <<<"$err"
err=$("$FSWB" run -n --backend libvirt -o uri=xen:///system --fstests-src "$MINI" 2>&1)
check "another driver is refused" grep -q "starts with qemu://" <<<"$err"
err=$("$FSWB" run -n --backend libvirt -o uri=qemu:///embed --fstests-src "$MINI" 2>&1)
check "an embedded driver needs its root" grep -q "qemu:///embed?root=DIR" <<<"$err"
err=$("$FSWB" run -n --backend libvirt -o "uri=qemu:///system?socket=a" --fstests-src "$MINI" 2>&1)
check "a relative socket path is refused" grep -q "socket must be an absolute path" <<<"$err"
err=$("$FSWB" run -n --backend libvirt -o "uri=qemu:///system?no_verify=1" --fstests-src "$MINI" 2>&1)
check "other URI parameters are refused" grep -q "takes only root=DIR" <<<"$err"

# 2. No daemon at the socket: said before any test, with how to start one.
"$FSWB" run --backend libvirt -o "uri=qemu:///system?socket=$T/nowhere/libvirt-sock" \
	-o accel=tcg -c ext4/4k --fstests-src "$MINI" generic/001 >"$T/out" 2>"$T/err"
rc=$?
check "no daemon: exit 2 (rc=$rc)" test "$rc" -eq 2
check "no daemon: the message says to start libvirtd" \
	grep -q "libvirt.s daemon is not running at qemu:///system?socket=$T/nowhere/libvirt-sock.*libvirtd -d" "$T/out" "$T/err"
out=$("$FSWB" doctor --backend libvirt -o "uri=qemu:///system?socket=$T/nowhere/libvirt-sock" 2>&1)
check "doctor names the missing daemon" grep -q "libvirt's daemon is not running" <<<"$out"

# 3. An embedded driver, no daemon at all. First fswb killed (SIGKILL) in
# the middle of a test: the driver's QEMU outlives it, doctor lists the
# lease, and the next run removes the domain, saying so, then runs whole,
# with a shell in the domain after the tests (--shell).
kill_mid_test "qemu:///embed?root=$EMBED"
sleep 1
check "killed, embedded: its QEMU is still running" test "$(qemus)" -eq 1
out=$("$FSWB" doctor --backend libvirt -o "uri=qemu:///embed?root=$EMBED" 2>&1)
check "doctor lists the lease with the domain" \
	grep -q "item domain qemu:///embed?root=$EMBED/shard1 fswb-ext4-4k-" <<<"$out"

# --shell: after the tests, a shell in the domain over its second channel
out=$(printf 'echo hi-from-$((6*7)); . "$HOST_OPTIONS"; echo "dev=$TEST_DEV"; exit\n' |
	"$FSWB" run --shell --backend libvirt -o "uri=qemu:///embed?root=$EMBED" -o accel=tcg \
	-c ext4/4k --fstests-src "$MINI" generic/001 generic/002 generic/005 2>"$T/err")
rc=$?
printf '%s\n' "$out" >"$T/out3"
check "embedded: exit 0 (rc=$rc; $(why))" test "$rc" -eq 0
check "embedded: the run removed the killed fswb's domain" \
	grep -q "removed what an earlier fswb left behind: libvirt" "$T/err"
check "embedded: generic/001 passes" grep -qE '^generic/001 +pass ' "$T/out3"
check "embedded: generic/002 passes" grep -qE '^generic/002 +pass ' "$T/out3"
check "embedded: generic/005 is not run, with check's reason" grep -qE '^generic/005 +notrun' "$T/out3"
check "embedded: the domain is named" grep -q "libvirt domain fswb-ext4-4k-" "$T/err"
check "embedded: the shell ran the commands in the domain" grep -q 'hi-from-42' "$T/out3"
check "embedded: the shell has the run's local.config" grep -q 'dev=/dev/vdb' "$T/out3"
check "embedded: the shell's end is seen" grep -q 'leaving the guest' "$T/out3"
run=$(last_run)
check "embedded: console.log holds the boot (the serial console stream)" \
	grep -q 'Linux version' "$run/console.log"
check "embedded: the driver's qemu.conf runs QEMU as this user" \
	grep -q "user = \"+$(id -u)\"" "$EMBED/shard1/etc/qemu.conf"
check "embedded: no QEMU is left" no_qemu
check "embedded: no lease is left" sh -c "! ls '$FSWB_HOME'/data/leases/libvirt-* 2>/dev/null"
check "embedded: no guest files are left" sh -c "! ls -d '$run'/guest-* 2>/dev/null"

# 4. qemu:///system of a private libvirtd: a failing test, then the domain
# destroyed from outside in the middle of the next: that test crashed, with
# the reason, and a new domain runs the rest.
if ! libvirtd_start; then
	fail "the private libvirtd starts" "$(cat "$LVD/start.log" "$LVD/libvirtd.log" 2>/dev/null | tail -5)"
	done_testing
	exit 1
fi
pass "the private libvirtd starts"
out=$("$FSWB" doctor --backend libvirt -o "uri=$LIBVIRT_URI" 2>&1)
check "doctor: the daemon answers with its versions" grep -qE "answers: libvirt [0-9.]+, QEMU [0-9.]+" <<<"$out"
before=$(last_run)
"$FSWB" run --backend libvirt -o "uri=$LIBVIRT_URI" -o accel=tcg -c ext4/4k \
	--fstests-src "$MINI" generic/006 generic/012 selftest/001 >"$T/out4" 2>"$T/err" &
pid=$!
if wait_test_start "$before" generic/012; then
	dom=$(lvsh list --name | grep '^fswb-' | head -1)
	check "the running domain is listed by virsh" test -n "$dom"
	lvsh destroy "$dom" >/dev/null
fi
wait "$pid"
rc=$?
check "system: exit 1 (rc=$rc; $(why))" test "$rc" -eq 1
check "system: generic/006 fails on its output" grep -qE '^generic/006 +fail .*output mismatch' "$T/out4"
check "system: generic/012 crashed" grep -qE '^generic/012 +crashed' "$T/out4"
check "system: the reason names virsh destroy" grep -q 'destroyed outside fswb' "$T/out4" "$T/err"
check "system: a new domain ran selftest/001" grep -qE '^selftest/001 +pass ' "$T/out4"
run=$(last_run)
check "system: console.log holds the boot" grep -q 'Linux version' "$run/console.log"
check "system: no domain is left" test -z "$(lvsh list --all --name | tr -d '[:space:]')"
check "system: no QEMU is left" no_qemu

# 5. fswb killed (SIGKILL) mid-test on qemu:///system: the domain goes with
# the connection (autodestroy).
kill_mid_test "$LIBVIRT_URI"
for _ in $(seq 1 50); do [ -z "$(lvsh list --all --name | tr -d '[:space:]')" ] && break; sleep 0.2; done
check "killed, system: its domain is gone with the connection" \
	test -z "$(lvsh list --all --name | tr -d '[:space:]')"
check "killed, system: no QEMU is left" no_qemu

done_testing
