#!/usr/bin/env bash
# fswb run --backend ssh without -o fstests: the test machine gets the
# appliance's fstests. fswb builds the appliance (from the host's mirror,
# with tests/fixtures/mini-fstests as its fstests), reads /opt/fstests out
# of the image, packs it once in its cache, copies it over SFTP into the
# machine's work directory and runs the tests there; a second run finds it
# and copies nothing. The machine is this host behind a private sshd
# (tests/e2e/sshd-lib.sh), with loop devices on sparse files in $T.
. "$(dirname "$0")/../lib.sh"
SSHD_WHAT="the appliance's fstests on an ssh test machine"
. "$(dirname "$0")/sshd-lib.sh"

MINI=$SRCDIR/tests/fixtures/mini-fstests
unset FSWB_GUEST

give_up()
{
	skip "$SSHD_WHAT" "$1"
	done_testing
	exit 0
}

for p in losetup mkfs.ext4 jq timeout; do
	command -v "$p" >/dev/null || give_up "$p is not installed"
done
"$FSWB" appliance build --dry-run --fstests-src "$MINI" >"$T/dry" 2>&1 ||
	give_up "cannot build an appliance here: $(cat "$T/dry")"

TD="" SD=""
cleanup_devices()
{
	[ -n "$SD" ] && losetup -d "$SD"
	[ -n "$TD" ] && losetup -d "$TD"
	return 0
}
at_exit cleanup_devices
truncate -s 256M "$T/test.img" "$T/scratch.img" || give_up "cannot create sparse images in $T"
TD=$(losetup -f --show "$T/test.img" 2>/dev/null) || give_up "losetup cannot attach a loop device"
SD=$(losetup -f --show "$T/scratch.img" 2>/dev/null) || give_up "losetup cannot attach a second"

if ! sshd_start a 2>"$T/sshd.err"; then
	fail "a private sshd" "$(cat "$T/sshd.err")"
	done_testing
	exit 1
fi

# run NAME TESTS...: no -o fstests, so the appliance's
run()
{
	local name=$1
	shift
	timeout -k 10 1500 "$FSWB" run --backend ssh -o host=127.0.0.1 -o port="$SSHD_PORT" \
		-o key="$SSHD_KEY" -o workdir="$T/work" -o test="$TD" -o scratch="$SD" \
		--yes-destroy "$TD,$SD" --accept-new-host-key --fstests-src "$MINI" \
		-c ext4/4k "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	rc=$?
	dir=$(sed -n 's/^Results: //p' "$T/$name.out" | tail -n 1)
}
statuses() { jq -r '.sections[].tests[] | "\(.test) \(.status)"' "$dir/run.json" | sort; }

run first generic/001 generic/003
check "the first run passes (rc=$rc: $(tail -n 3 "$T/first.err" | tr '\n' ' '))" test "$rc" -eq 0
[ "$rc" -eq 0 ] || sed 's/^/# first: /' "$T/first.out"
check "... both tests pass" test "$(statuses)" = $'generic/001 pass\ngeneric/003 pass'
check "... the appliance was built for it" grep -q '^\[appliance\]' "$T/first.out"
check "... fswb says it packs and copies the appliance's fstests" \
	eval 'grep -q "packing the appliance.s fstests" "$dir/console.log" &&
	      grep -q "putting the appliance.s fstests on the test machine" "$dir/console.log"'
tree=$(ls -d "$T"/work/fstests-*/fstests 2>/dev/null)
check "... the tree is in the machine's work directory, complete" \
	eval '[ -x "$tree/check" ] && [ -f "${tree%/fstests}/.complete" ]'
check "... it is the appliance's mini-fstests" test -f "$tree/tests/generic/001"
check "... the upload is gone" eval '! ls "$T"/work/*.upload.* 2>/dev/null'
check "... packed once in fswb's cache" test "$(ls "$FSWB_HOME"/cache/ssh/fstests-*.tar.gz | wc -l)" -eq 1
touch "$tree/.marker"
# the first run's sessions on the machine end with it (up to 30 s)
for ((i = 0; i < 60; i++)); do
	[ -z "$(sshd_procs a)" ] && break
	sleep 0.5
done
check "the first run left nothing running on the machine" test -z "$(sshd_procs a)"

run second generic/002
check "a second run passes (rc=$rc: $(tail -n 3 "$T/second.err" | tr '\n' ' '))" test "$rc" -eq 0
[ "$rc" -eq 0 ] || sed 's/^/# second: /' "$T/second.out"
check "... and copies nothing" \
	eval '! grep -q "putting the appliance.s fstests" "$dir/console.log"'
check "... it ran in the same tree" test -f "$tree/.marker"

check "nothing is left mounted on the machine" eval '! sshd_mounts a | grep -E "^($TD|$SD) "'
done_testing
