#!/usr/bin/env bash
# An appliance for another architecture (an arm64 chroot for an arm64-v8a
# Android device, built on this x86_64 host): refused with what to install
# and enable while binfmt_misc cannot run arm64 programs, then built for real
# through qemu-user-static (a tiny one: the base system and mount, with
# mini-fstests) once the test has mounted binfmt_misc and registered
# qemu-aarch64 (both undone at the end when the test did them). Kept in the
# shared test cache, so a second run reuses it.
. "$(dirname "$0")/../lib.sh"

export FSWB_CACHE_DIR=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests
BM=/proc/sys/fs/binfmt_misc
CONF=/usr/lib/binfmt.d/qemu-aarch64.conf

give_up() {
	skip "an arm64 appliance built on this host" "$1"
	done_testing
	exit 0
}
[ "$(uname -m)" = x86_64 ] || give_up "this host is $(uname -m), not x86_64"
[ "$(id -u)" -eq 0 ] || give_up "needs root (binfmt_misc)"
for p in mmdebstrap arch-test debugfs jq; do
	command -v "$p" >/dev/null || give_up "$p is not installed (make deps)"
done
[ -f "$CONF" ] || give_up "qemu-user-static is not installed (make deps): no $CONF"
"$FSWB" appliance build --dry-run --fstests-src "$MINI" >"$T/dry" 2>&1 ||
	give_up "cannot build an appliance here: $(cat "$T/dry")"

# binfmt_misc as this test found it, restored at the end
mounted="" registered=""
restore_binfmt() {
	[ -n "$registered" ] && echo -1 >"$BM/qemu-aarch64"
	[ -n "$mounted" ] && umount "$BM"
	return 0
}
at_exit restore_binfmt
if [ ! -e "$BM/register" ]; then
	mount -t binfmt_misc binfmt_misc "$BM" 2>/dev/null ||
		give_up "binfmt_misc cannot be mounted here"
	mounted=1
fi

build() { "$FSWB" appliance build --arch arm64 --packages mount --fstests-src "$MINI" "$@"; }
if [ ! -e "$BM/qemu-aarch64" ]; then
	out=$(build --dry-run 2>&1)
	check "without qemu-aarch64 in binfmt_misc the build is refused, saying what to do" \
		grep -q "binfmt_misc has no qemu-aarch64 here: apt-get install qemu-user-static binfmt-support" <<<"$out"
	"$FSWB" doctor --backend adb >"$T/doctor" 2>&1
	check "... and fswb doctor says it for arm64 devices" \
		grep -q "arm64 devices need --arch arm64, which runs arm64 programs through qemu-user-static" "$T/doctor"
	cat "$CONF" >"$BM/register" || give_up "qemu-aarch64 cannot be registered in binfmt_misc"
	registered=1
else
	skip "the build refused without qemu-aarch64" "this host had it registered already"
fi

host_key=$("$FSWB" appliance build --dry-run --packages mount --fstests-src "$MINI" --json 2>/dev/null | jq -r .key)
out=$(build --dry-run --json 2>&1)
arm_key=$(jq -r .key <<<"$out" 2>/dev/null)
check "the arm64 appliance has a key of its own" eval '[ -n "$arm_key" ] && [ "$arm_key" != null ] && [ "$arm_key" != "$host_key" ]'

timeout 3000 "$FSWB" appliance build --arch arm64 --packages mount --fstests-src "$MINI" --json \
	>"$T/build.json" 2>"$T/build.err"
rc=$?
check "the arm64 appliance builds through qemu-user-static (rc=$rc: $(tail -n 2 "$T/build.err" | tr '\n' ' '))" test "$rc" -eq 0
image=$(jq -r .image "$T/build.json" 2>/dev/null)
check "... appliance.json says arm64" test "$(jq -r .arch "$(dirname "$image")/appliance.json" 2>/dev/null)" = arm64
debugfs -R "dump /usr/bin/mount $T/mount" "$image" >/dev/null 2>&1
# ELF e_machine, bytes 18-19: 0xb7 is AArch64
check "... its programs are aarch64 ELF" test "$(od -An -tx1 -j18 -N2 "$T/mount" 2>/dev/null | tr -d ' ')" = b700
check "... with mini-fstests in /opt/fstests" \
	eval 'debugfs -R "stat /opt/fstests/check" "$image" 2>/dev/null | grep -q "Type: regular"'
"$FSWB" doctor --backend adb >"$T/doctor2" 2>&1
check "fswb doctor says arm64 appliances can be built here" \
	grep -q "arm64 appliances can be built here (qemu-user-static)" "$T/doctor2"
done_testing
