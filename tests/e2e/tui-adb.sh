#!/usr/bin/env bash
# The workbench with Android devices, end to end: the real binary in tmux,
# the real adb server on a private port and two devices served by
# tests/e2e/adbd.py (tests/e2e/adb-lib.sh). In the backend step adb lists
# both with their model and product names and asks for one; the serial is
# typed (o), a hostile one refused at once; the devices the tests format
# (loop files in /data) are shown with the wear warning and confirmed by
# typing yes; then a run of one test in the pushed chroot, live, beside the
# device's kernel log, and the choices remembered.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../ui/tmux-lib.bash"

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests
unset FSWB_GUEST
. "$(dirname "$0")/adb-lib.sh"
ui_setup
for p in jq debugfs; do
	if ! command -v "$p" >/dev/null; then
		skip "the workbench with an Android device" "$p is not installed"
		done_testing
		exit 0
	fi
done

adb_server_start
ADB_DATA_SIZE=40g adb_device_start a --model Pixel_Test --product fswb_x86 \
	--prop ro.product.cpu.abi=x86_64 --prop ro.build.version.release=14
A=$ADB_SERIAL
adb_device_start b --model Board_Two --product fswb_board --prop ro.product.cpu.abi=x86_64
B=$ADB_SERIAL

ui_start 120 40
check_screen "welcome" "step 1 of 6"
ui_keys 3
check_screen "filesystem step" "step 3 of 6"
ui_keys Enter
check_screen "backend step" "step 4 of 6"
ui_keys Down Down Down Down
check_screen "adb is offered" "a rooted Android device over adb"
check_screen "two devices: pick one" "not usable yet: 2 devices are attached, pick one" 20
check_screen "... listed with model and product" "$A (Pixel_Test, fswb_x86)"
check_screen "... both" "$B (Board_Two, fswb_board)"
ui_keys o C-u "serial=$A;reboot" Enter
check_screen "a hostile serial is refused at once" "a device serial as"
ui_keys o C-u "serial=$A" Enter
check_screen "the devices to format are shown with the wear warning" \
	"format /dev/fswb/test, /dev/fswb/scratch on $A (Pixel_Test, fswb_x86)" 20
check_screen "... and the flash wear" "wear the device's flash"
ui_keys Enter
check_screen "Enter does not go on before it is confirmed" "waits for you to confirm"
ui_keys a yes Enter
check_screen "confirmed: ready, with Android, ABI, root and free space" \
	"ready: $A (Pixel_Test, fswb_x86)" 20
check_screen "... the facts" "Android 14, x86_64, root (adbd)"
ui_keys Enter
check_screen "tests step" "step 5 of 6"
ui_pick_mini_test generic/001
check_screen "review: the device's own kernel" "the test machine's own"
check_screen "review: the command line confirms the devices" "wipe=/dev/fswb/test,/dev/fswb/scratch"
ui_keys Enter
check_screen "the run ends" "the run has ended" 600
check_screen "generic/001 ran on the device" "generic/001"
check_screen "the device's kernel log is beside it" "run fstests generic/001" 30
ui_keys q
ui_stop
run=$(ls -td "$FSWB_HOME"/data/runs/*/ | head -n 1)
check "run.json: generic/001 passed" \
	test "$(jq -r '.sections[].tests[] | select(.test == "generic/001") | .status' "$run/run.json")" = pass
check "the plan is remembered with the device" grep -rqF "$A" "$FSWB_HOME/config"
check "nothing of the session is left on the device" \
	test -z "$(adb_device_exec a sh -c 'grep " /data/fswb/" /proc/mounts; ls /data/fswb/disks 2>/dev/null;
		ls /dev/fswb 2>/dev/null')"

# the chroot kept on the device is shown in the wizard and removed with x
ui_start 120 40
check_screen "again: welcome" "step 1 of 6"
ui_keys 3
check_screen "again: filesystem step" "step 3 of 6"
ui_keys Enter
check_screen "again: backend step" "step 4 of 6"
ui_keys Down Down Down Down
check_screen "what fswb keeps on the device is shown, with x" \
	"kept: fswb's chroot and files in /data/fswb on $A" 20
ui_keys x no Enter
check_screen "'no' removes nothing" "nothing removed"
check "... the chroot is still there" adbsh a "ls -d /data/fswb"
ui_keys x yes Enter
check_screen "yes removes it" "removed /data/fswb on $A" 30
check "... it is gone from the device" eval '! adbsh a "ls -d /data/fswb" >/dev/null 2>&1'
check_screen "... and the wizard says nothing is kept" "ready: $A" 20
check "... no kept line" eval '! ui_screen | grep -q "kept: fswb"'
ui_stop
check "no sanitizer report" sanitizers_clean
done_testing
