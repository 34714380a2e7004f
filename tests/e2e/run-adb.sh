#!/usr/bin/env bash
# The adb backend end to end: the real adb server and client (on a private
# port, with a scratch HOME) and devices served by tests/e2e/adbd.py, whose
# userland is toybox with mksh and whose /data is a tmpfs of their own
# (tests/e2e/adb-lib.sh). The appliance (mini-fstests) is packed as a
# chroot, pushed, unpacked with toybox and run on loop files in /data; the
# device "reboots" in the middle of a test (crashed, the run goes on once it
# is back); devices without shell v2, demanding AUTH, unknown, with a full
# /data; nothing is left on the device but the kept chroot, which
# `fswb appliance rm --device` removes.
. "$(dirname "$0")/../lib.sh"

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests
unset FSWB_GUEST
. "$(dirname "$0")/adb-lib.sh"

give_up() {
	skip "fswb run on an adb device" "$1"
	done_testing
	exit 0
}
for p in jq timeout debugfs; do
	command -v "$p" >/dev/null || give_up "$p is not installed"
done
"$FSWB" appliance build --dry-run --fstests-src "$MINI" >"$T/dry" 2>&1 ||
	give_up "cannot build an appliance here: $(cat "$T/dry")"

WIPE=/dev/fswb/test,/dev/fswb/scratch
props=(--model Pixel_Test --product fswb_x86 --prop ro.product.cpu.abi=x86_64
	--prop ro.build.version.release=14)
why() { tail -n 3 "$T/$1.err" 2>/dev/null | tr '\n' ' '; }
# run NAME SERIAL TESTS...: fswb run on the device, its results dir in $dir
run() {
	local name=$1 serial=$2
	shift 2
	timeout -k 10 1500 "$FSWB" run --backend adb -o serial="$serial" -o wipe="$WIPE" \
		-o boot=60 --fstests-src "$MINI" -c ext4/4k "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	rc=$?
	cat "$T/$name.out" >>"$T/$name.err"
	dir=$(sed -n 's/^Results: //p' "$T/$name.out" | tail -n 1)
}
statuses() { jq -r '.sections[].tests[] | "\(.test) \(.status)"' "$dir/run.json" | sort; }
# what the device keeps of fswb's besides the chroot (must be nothing after a run)
leftovers() {
	adb_device_exec "$1" sh -c 'grep " /data/fswb/" /proc/mounts; ls /data/fswb/disks 2>/dev/null;
		ls /dev/fswb 2>/dev/null; losetup -a | grep /data/fswb; ls /data/fswb/agent.pid 2>/dev/null' || true
}

adb_server_start
ADB_DATA_SIZE=40g adb_device_start a "${props[@]}"
A=$ADB_SERIAL

# 1. A whole run on loop files: pass, fail, not run; the chroot pushed once.
run first "$A" generic/001 generic/002 generic/004 generic/006
check "a run on the device ends (rc=$rc, 1 failure expected: $(why first))" test "$rc" -eq 1
check "... with check's statuses ($(statuses | tr '\n' ' '))" test "$(statuses)" = \
	$'generic/001 pass\ngeneric/002 pass\ngeneric/004 notrun\ngeneric/006 fail'
check "... generic/006's .out.bad came back" test -s "$dir/results/ext4-4k/generic/006.out.bad"
check "... the chroot was pushed and unpacked" \
	eval 'grep -q "pushing the chroot" "$dir/console.log" && grep -q "unpacking the chroot" "$dir/console.log"'
check "... the kernel log is the device's, from this session on" \
	eval 'grep -q "run fstests generic/001" "$dir/console.log" && ! grep -q "adbd-test: started" "$dir/console.log"'
check "... the disks were loop files in /data as /dev/fswb/ROLE" grep -q "/dev/fswb/scratch" "$T/first.out"
check "... nothing of the session is left on the device" test -z "$(leftovers a)"
check "... the chroot is kept, whole" \
	eval 'adbsh a "ls -d /data/fswb/root-*.done" | grep -q done'
check "... packed once in fswb's cache" test "$(ls "$FSWB_CACHE_DIR"/adb/chroot-*.tar.gz | wc -l)" -ge 1

run second "$A" generic/001
check "a second run passes (rc=$rc: $(why second))" test "$rc" -eq 0
check "... and pushes no chroot" eval '! grep -q "pushing the chroot" "$dir/console.log"'

# 2. Formatting waits for the user's word, naming each device.
timeout 600 "$FSWB" run --backend adb -o serial="$A" --fstests-src "$MINI" -c ext4/4k \
	generic/001 >"$T/nowipe.out" 2>"$T/nowipe.err" </dev/null
check "without -o wipe= nothing is formatted, and the devices are named" \
	grep -q "would format /dev/fswb/test, /dev/fswb/scratch" "$T/nowipe.err"

# 3. The device reboots in the middle of a test: crashed, and the run goes on.
before=$(ls "$FSWB_HOME/data/runs" | wc -l)
timeout -k 10 1500 "$FSWB" run --backend adb -o serial="$A" -o wipe="$WIPE" -o boot=60 \
	--fstests-src "$MINI" -c ext4/4k generic/012 generic/001 >"$T/reboot.out" 2>"$T/reboot.err" </dev/null &
runpid=$!
for _ in $(seq 1 600); do
	r=$(ls -td "$FSWB_HOME"/data/runs/*/ | head -1)
	[ "$(ls "$FSWB_HOME/data/runs" | wc -l)" -gt "$before" ] &&
		grep -q '"event":"test_start".*"generic/012"' "$r/events.jsonl" 2>/dev/null && break
	sleep 0.2
done

adb_device_reboot a
wait "$runpid"
rc=$?
cat "$T/reboot.out" >>"$T/reboot.err"
dir=$(sed -n 's/^Results: //p' "$T/reboot.out" | tail -n 1)
check "a run whose device rebooted mid-test ends (rc=$rc: $(why reboot))" test "$rc" -eq 1
check "... generic/012 crashed, generic/001 passed after the device came back ($(statuses | tr '\n' ' '))" \
	test "$(statuses)" = $'generic/001 pass\ngeneric/012 crashed'
check "... fswb says the device dropped off, and waited for it" \
	eval 'grep -q "dropped off (a reboot, or a kernel panic)" "$T/reboot.err" &&
	      grep -q "is back" "$dir/console.log"'
check "... nothing of the session is left on the device" test -z "$(leftovers a)"

# 4. Devices fswb refuses, each with the reason.
adb_device_start nov2 "${props[@]}" --no-shell-v2
run nov2 "$ADB_SERIAL" generic/001
check "a device without shell v2 is refused, saying why" \
	grep -q "no shell protocol v2" "$T/nov2.err"
adb_device_stop nov2

adb_device_start auth "${props[@]}" --auth "$ADB_KEY_PUB"
check "a device demanding AUTH of this server's key is ready" test "$ADB_STATE" = device
"$FSWB" doctor --backend adb -o serial="$ADB_SERIAL" >"$T/doctor" 2>&1
check "... fswb doctor lists it with root, ABI and free space" \
	grep -q "Pixel_Test.*Android 14, x86_64, root (adbd)" "$T/doctor"
adb_device_stop auth
other_pub=$T/other-adb.pub
python3 - "$ADB_KEY_PUB" "$other_pub" <<'EOF'
import base64, struct, sys, random
# a well-formed adb public key that is not the server's: the server's, its modulus changed
raw = bytearray(base64.b64decode(open(sys.argv[1]).read().split()[0]))
raw[8] ^= 0x55
open(sys.argv[2], "w").write(base64.b64encode(bytes(raw)).decode() + " other@test\n")
EOF
adb_device_start unauth "${props[@]}" --auth "$other_pub"
run unauth "$ADB_SERIAL" generic/001
check "a device that has not authorized this computer is refused, saying what to do" \
	grep -q "has not authorized this computer: unlock it and accept" "$T/unauth.err"
adb_device_stop unauth

run unknown 127.0.0.1:1 generic/001
check "an unknown serial is refused, with the devices the server lists" \
	grep -q "no device 127.0.0.1:1 is attached to the adb server (it lists: $A" "$T/unknown.err"

ADB_DATA_SIZE=64m adb_device_start small "${props[@]}"
run small "$ADB_SERIAL" generic/001
check "a device whose /data is too small is refused, with what it has and needs" \
	grep -q "has 64 MiB free in /data/fswb; fswb needs" "$T/small.err"
adb_device_stop small

# 5. fswb appliance rm --device: the chroot and fswb's directory go.
"$FSWB" appliance rm --device "$A" >"$T/rm.out" 2>&1
check "fswb appliance rm --device removes fswb's directory on the device ($(cat "$T/rm.out"))" \
	eval 'grep -q "removed /data/fswb on $A" "$T/rm.out" && ! adbsh a "ls /data/fswb" >/dev/null 2>&1'
"$FSWB" appliance rm --device "$A" >"$T/rm2.out" 2>&1
check "... a second time says there is nothing" grep -q "nothing of fswb's in /data/fswb" "$T/rm2.out"

# 6. An arm64 device: the appliance follows the device (made for arm64 through
# qemu-user-static; tests/e2e/appliance-arm64.sh builds one).
adb_device_start arm --model Pixel_Arm --product fswb_arm64 --prop ro.product.cpu.abi=arm64-v8a
ARM=$ADB_SERIAL
"$FSWB" doctor --backend adb -o serial="$ARM" >"$T/armdoc" 2>&1
if [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
	check "an arm64-v8a device: its appliance is made for arm64" \
		grep -q "its appliance is built for arm64 through qemu-user-static" "$T/armdoc"
	skip "a run on an arm64-v8a device without qemu-aarch64" "this host runs arm64 programs"
else
	check "an arm64-v8a device without qemu-aarch64 in binfmt_misc: doctor says what to do" \
		grep -q "its appliance is built for arm64, whose programs run here through qemu-user-static, and binfmt_misc has no qemu-aarch64" "$T/armdoc"
	run arm "$ARM" generic/001
	check "... and a run on it makes the appliance for arm64, refused saying what to do" \
		grep -q "an appliance for arm64 runs arm64 programs while it is built, through qemu-user-static, and binfmt_misc has no qemu-aarch64" "$T/arm.err"
fi
adb_device_stop arm

done_testing
