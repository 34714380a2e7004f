#!/usr/bin/env bash
# The workbench with an ssh test machine, end to end: the real binary in
# tmux, a private sshd on 127.0.0.1 (tests/e2e/sshd-lib.sh) whose machine
# is this host with mini-fstests and loop devices. In the backend step the
# ssh options are typed (o), a bad one refused at once; what the probe asks
# to confirm is shown and confirmed by typing yes: first the unknown host
# key by its fingerprint, then the devices with what they hold; "no" does
# not confirm. Then a run of one test, live, and the choices remembered.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../ui/tmux-lib.bash"
SSHD_WHAT="the workbench with an ssh test machine"
. "$(dirname "$0")/sshd-lib.sh"
ui_setup

MINI=$SRCDIR/tests/fixtures/mini-fstests
unset FSWB_GUEST
for p in losetup mkfs.ext4 jq; do
	if ! command -v "$p" >/dev/null; then
		skip "$SSHD_WHAT" "$p is not installed"
		done_testing
		exit 0
	fi
done

TD="" SD=""
cleanup_devices()
{
	[ -n "$SD" ] && losetup -d "$SD"
	[ -n "$TD" ] && losetup -d "$TD"
	return 0
}
at_exit cleanup_devices
truncate -s 256M "$T/test.img" "$T/scratch.img"
TD=$(losetup -f --show "$T/test.img") && SD=$(losetup -f --show "$T/scratch.img") || {
	skip "$SSHD_WHAT" "losetup cannot attach two loop devices here"
	done_testing
	exit 0
}
mkfs.ext4 -q -F -L keep-me "$TD" >/dev/null 2>&1
cp -a "$MINI" "$T/mini"
rm -rf "$T/mini/results" "$T/mini/local.config"
if ! sshd_start a 2>"$T/sshd.err"; then
	fail "a private sshd" "$(cat "$T/sshd.err")"
	done_testing
	exit 1
fi

ui_start 120 40
check_screen "welcome" "step 1 of 6"
ui_keys 3
check_screen "filesystem step" "step 3 of 6"
ui_keys Enter
check_screen "backend step" "step 4 of 6"
ui_keys Down Down Down
check_screen "ssh is offered" "a prepared test machine over ssh"
check_screen "ssh without a machine says what to name" "not usable yet: no test machine named" 20

# a bad option is refused as it is typed in
ui_keys o C-u "host=127.0.0.1 prot=22" Enter
check_screen "a misspelt option is refused at once" "takes no option 'prot'"
ui_keys o C-u "host=127.0.0.1 port=$SSHD_PORT key=$SSHD_KEY fstests=$T/mini workdir=$T/work test=$TD scratch=$SD" Enter
check_screen "the options are shown" "options: host=127.0.0.1 port=$SSHD_PORT"
check_screen "the unknown host key is shown with its fingerprint" "to confirm: trust the host key" 20
check_screen "... the fingerprint is the machine's" "$SSHD_HOSTKEY_FP"
ui_keys Enter
check_screen "Enter does not go on before it is confirmed" "waits for you to confirm"
ui_keys a no Enter
check_screen "'no' does not confirm" "not confirmed"
ui_keys a yes Enter
check_screen "yes trusts it: now the devices to confirm, with what they hold" \
	"$TD (256.0 MiB, ext4 labelled 'keep-me')" 20
check "the key is in fswb's known_hosts" grep -qF "$(cut -d' ' -f2 "$SSHD_HOSTKEY_PUB")" \
	"$FSWB_HOME/data/ssh/known_hosts"
check "... and TEST is untouched so far" test "$(blkid -o value -s LABEL "$TD")" = keep-me
ui_keys a yes Enter
check_screen "the devices confirmed: ready" "ready: root@127.0.0.1:$SSHD_PORT" 20
ui_keys Enter
check_screen "tests step" "step 5 of 6"
# the catalogue from a local copy of the machine's tree (f): tests by name
ui_pick_mini_test generic/001
check_screen "review: the machine's own kernel" "the test machine's own"
check_screen "review: the command line confirms the devices" "wipe=$TD,$SD"
ui_keys Enter
check_screen "the run ends" "the run has ended" 300
check_screen "generic/001 passed on the machine" "generic/001"
check_screen "the machine's kernel log is beside it" "run fstests generic/001" 30
ui_keys q
ui_stop
check "nothing is left mounted" eval '! grep -qE "^($TD|$SD) " /proc/self/mounts'
run=$(ls -td "$FSWB_HOME"/data/runs/*/ | head -n 1)
check "run.json: generic/001 passed" \
	test "$(jq -r '.sections[].tests[] | select(.test == "generic/001") | .status' "$run/run.json")" = pass
check "the plan is remembered with the machine" \
	eval 'grep -q "\"host=127.0.0.1\"\|127.0.0.1" "$FSWB_HOME"/config/*plan*.json 2>/dev/null || grep -rq "127.0.0.1" "$FSWB_HOME/config"'
check "no sanitizer report" sanitizers_clean
done_testing
