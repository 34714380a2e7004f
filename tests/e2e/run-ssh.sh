#!/usr/bin/env bash
# fswb run --backend ssh end to end, against a real OpenSSH server: a
# private sshd on 127.0.0.1 (tests/e2e/sshd-lib.sh) whose "test machine" is
# this host in a mount namespace of its own, with a copy of mini-fstests and
# loop devices on sparse files in $T. Nothing of this host's ~/.ssh, its
# known_hosts or its sshd is used; fswb's own known_hosts is in $FSWB_HOME.
#
# A whole run gives the statuses mini-fstests' check gives on the same
# devices by itself; host keys: an unknown one is refused (with its SHA256
# fingerprint, before any credential is offered) unless accepted, then
# remembered; a changed one is refused even when new ones are accepted; a
# wrong user key is refused, and no key is ever shown or logged; devices:
# a mounted one and one the user did not name in wipe= are refused, with
# what they hold; a connection dropped in the middle of a test: the run
# goes on or records the test as crashed, and ends in bounded time; and
# nothing is left running or mounted on the machine.
#
# The dangerous mini-fstests tests (a panic, a hang) would run for real
# here (this host may well be a virtual machine, and the agent says it is a
# guest): the copy has them removed, and every run names its tests.
. "$(dirname "$0")/../lib.sh"
SSHD_WHAT="fswb run --backend ssh against a private sshd"
. "$(dirname "$0")/sshd-lib.sh"

MINI=$SRCDIR/tests/fixtures/mini-fstests
unset FSWB_GUEST

give_up()
{
	skip "$SSHD_WHAT" "$1"
	done_testing
	exit 0
}

for p in losetup mkfs.ext4 mount umount mountpoint blkid lsblk jq timeout; do
	command -v "$p" >/dev/null || give_up "$p is not installed"
done
if "$FSWB" plan --backend ssh -o host=127.0.0.1 -o fstests=/x --dump 2>&1 >/dev/null |
	grep -q "unknown 'ssh'"; then
	give_up "this fswb has no ssh backend"
fi

# ---- the machine's devices and fstests ---------------------------------------

TD="" SD="" LD="" OD=""
cleanup_devices()
{
	local dev
	for dev in "$TD" "$SD" "$LD" "$OD"; do
		[ -n "$dev" ] && losetup -d "$dev"
	done
	return 0
}
at_exit cleanup_devices

mkdir -p "$T/mnt/test" "$T/mnt/scratch" "$T/tmp" "$T/work"
truncate -s 256M "$T/test.img" "$T/scratch.img" "$T/logwrites.img" "$T/other.img" ||
	give_up "cannot create sparse images in $T"
attach() { losetup -f --show "$1" 2>/dev/null; }
TD=$(attach "$T/test.img") || give_up "losetup cannot attach a loop device here"
SD=$(attach "$T/scratch.img") || give_up "losetup cannot attach a second loop device"
LD=$(attach "$T/logwrites.img") || give_up "losetup cannot attach a third loop device"
OD=$(attach "$T/other.img") || give_up "losetup cannot attach a fourth loop device"
mkfs.ext4 -q -F "$TD" >/dev/null 2>&1 || give_up "mkfs.ext4 on $TD failed"

# fstests on the machine: mini-fstests without its dangerous tests, and two
# of this file's own: generic/013 runs up to a minute (to drop its
# connection under it), generic/014 passes at once
M=$T/mini
cp -a "$MINI" "$M"
rm -rf "$M/results" "$M/local.config" "$M"/tests/generic/01[01] "$M"/tests/generic/01[01].out
sed -i '/^01[01] /d' "$M/tests/generic/group.list"
if grep -rlq "dangerous" "$M/tests"; then
	fail "the machine's mini-fstests has no dangerous test" "$(grep -rl dangerous "$M/tests")"
	done_testing
	exit 1
fi
cat >"$M/tests/generic/013" <<EOF
#! /bin/bash
# FS QA Test No. 013
#
# (tests/e2e/run-ssh.sh) Runs up to a minute, one second at a time, so
# that its connection can be dropped under it.
#
. ./common/preamble
_begin_fstest rw
_require_test
: >"$T/slow.started"
for i in \$(seq 60); do
	sleep 1
done
echo "Silence is golden"
status=0
exit
EOF
cat >"$M/tests/generic/014" <<'EOF'
#! /bin/bash
# FS QA Test No. 014
#
# (tests/e2e/run-ssh.sh) Passes at once.
#
. ./common/preamble
_begin_fstest rw
_require_test
echo "Silence is golden"
status=0
exit
EOF
printf 'QA output created by %s\nSilence is golden\n' 013 >"$M/tests/generic/013.out"
printf 'QA output created by %s\nSilence is golden\n' 014 >"$M/tests/generic/014.out"
chmod 0755 "$M/tests/generic/013" "$M/tests/generic/014"
printf '013 rw\n014 rw\n' >>"$M/tests/generic/group.list"

# the tests of the whole run: a pass of each kind, a not-run, each kind of
# failure (output, exit status, dmesg, fsck), and a two-second one
TESTS=(ext4/001 generic/001 generic/002 generic/003 generic/004 generic/005
	generic/006 generic/007 generic/008 generic/009 generic/012)

# ---- the reference: mini-fstests' check by itself on the same devices -----------

R=$T/ref
cp -a "$M" "$R"
cat >"$R/local.config" <<EOF
export FSTYP=ext4
export TEST_DEV=$TD
export TEST_DIR=$T/mnt/test
export SCRATCH_DEV=$SD
export SCRATCH_MNT=$T/mnt/scratch
export LOGWRITES_DEV=$LD
EOF
(cd "$R" && TMPDIR=$T/tmp ./check "${TESTS[@]}") >"$T/ref.out" 2>"$T/ref.err"
# "TEST STATUS" lines from check's summary: Not run, Failures, else passed
ref_statuses()
{
	local t notrun failures
	notrun=" $(sed -n 's/^Not run: //p' "$T/ref.out") "
	failures=" $(sed -n 's/^Failures: //p' "$T/ref.out") "
	for t in $(sed -n 's/^Ran: //p' "$T/ref.out"); do
		if [[ $notrun == *" $t "* ]]; then
			echo "$t notrun"
		elif [[ $failures == *" $t "* ]]; then
			echo "$t fail"
		else
			echo "$t pass"
		fi
	done | sort
}
ref=$(ref_statuses)
check "the reference run by check itself ran the ${#TESTS[@]} tests" \
	test "$(wc -l <<<"$ref")" -eq "${#TESTS[@]}"
# what does not depend on this machine
for want in "ext4/001 pass" "generic/001 pass" "generic/003 pass" "generic/005 notrun" \
	"generic/006 fail" "generic/007 fail" "generic/009 fail" "generic/012 pass"; do
	check "the reference: $want" grep -qx "$want" <<<"$ref"
done

# ---- the server ------------------------------------------------------------------

if ! sshd_start a 2>"$T/sshd.err"; then
	fail "a private sshd" "$(cat "$T/sshd.err")"
	done_testing
	exit 1
fi
pass "a private sshd on 127.0.0.1:$SSHD_PORT"
# the base64 body of the client's private key: it must never show
key_body() { grep -v '^-----' "$1" | grep -E '.{20}'; }
key_body "$SSHD_KEY" >"$T/key.body"

runs_dir=$FSWB_HOME/data/runs
# the run directory of run NAME, as its stdout names it
run_dir() { sed -n 's/^Results: //p' "$T/$1.out" | tail -n 1; }
nruns() { ls -d "$runs_dir"/*/ 2>/dev/null | wc -l; }
# the session lines of the server's log since mark_log
mark_log() { log_from=$(($(stat -c %s "$SSHD_LOG") + 1)); }
log_since() { tail -c "+$log_from" "$SSHD_LOG"; }

# ssh_run NAME [options and tests]: fswb run --backend ssh with the
# machine's options (more -o after them win), bounded to 5 minutes; stdout
# in $T/NAME.out, stderr in $T/NAME.err, status in $rc, seconds in $secs
SSH_OPTS=()
set_opts()
{
	SSH_OPTS=(--backend ssh -o host=127.0.0.1 -o port="$SSHD_PORT" -o user=root
		-o key="$SSHD_KEY" -o fstests="$M" -o workdir="$T/work"
		-o test="$TD" -o scratch="$SD" -o logwrites="$LD"
		-o boot=30 -o silence=60 -c ext4/4k)
}
set_opts
# the devices the tests may format: -o wipe= unless NOWIPE=1
ssh_run()
{
	local name=$1 start=$SECONDS wipe=(-o wipe="$TD,$SD,$LD")
	shift
	[ "${NOWIPE:-}" = 1 ] && wipe=()
	mark_log
	timeout -k 10 300 "$FSWB" run "${SSH_OPTS[@]}" "${wipe[@]}" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	rc=$? secs=$((SECONDS - start))
}
# why NAME: the end of a run's stderr, for a failing check's name
why() { tail -n 3 "$T/$1.err" 2>/dev/null | tr '\n' ' '; }
both() { cat "$T/$1.out" "$T/$1.err"; }
# show NAME: what fswb printed, as TAP comments (for the log, and for a
# failing check's message)
show() { both "$1" | sed "s/^/# $1: /" | tail -n "${2:-12}"; }
# statuses NAME: "TEST STATUS" of run NAME's run.json, sorted
statuses() { jq -r '.sections[].tests[] | "\(.test) \(.status)"' "$(run_dir "$1")/run.json" | sort; }
no_test_ran() { ! grep -qE '^(generic|ext4)/[0-9]+ +(pass|fail|notrun|crashed|hung)' "$T/$1.out"; }
label() { blkid -o value -s LABEL "$1"; }
# the machine's processes but the server's own, after at most 30 s
machine_idle()
{
	local i
	for ((i = 0; i < 60; i++)); do
		[ -z "$(sshd_procs a)" ] && return 0
		sleep 0.5
	done
	sshd_procs a
	return 1
}
machine_unmounted()
{
	! sshd_mounts a | grep -E "^($TD|$SD|$LD|$OD) | $T/mnt"
}

# ---- 1. an unknown host key -------------------------------------------------------

mkfs.ext4 -q -F -L untouched "$TD" >/dev/null 2>&1
n0=$(nruns)
ssh_run unknown "${TESTS[@]}"
show unknown
check "an unknown host key is refused (rc=$rc)" test "$rc" -ne 0 -a "$rc" -lt 124
check "... the message shows its SHA256 fingerprint ($SSHD_HOSTKEY_FP)" \
	eval 'both unknown | grep -qF "$SSHD_HOSTKEY_FP"'
check "... and says how to accept it" eval 'both unknown | grep -q -- "--accept-new-host-key\|hostkey=accept-new"'
check "... no test ran" no_test_ran unknown
check "... no credential was offered: the server saw no login" eval '! log_since | grep -q "Accepted publickey"'
check "... TEST was not touched" test "$(label "$TD")" = untouched
check "... the key is not remembered" eval '! grep -rqF "$(cut -d" " -f2 "$SSHD_HOSTKEY_PUB")" "$FSWB_HOME"'

# ---- 2. accepted: the whole run -----------------------------------------------------

ssh_run whole --accept-new-host-key "${TESTS[@]}"
run=$(run_dir whole)
check "a whole run with --accept-new-host-key: exits 1, tests failed (rc=$rc; $(why whole))" test "$rc" -eq 1
check "... a new run directory" test "$(nruns)" -gt "$n0"
check "... run.json says finished" jq -e '.finished == true' "$run/run.json"
got=$(statuses whole)
check "... the statuses of run.json are check's own on the same devices" \
	eval '[ "$got" = "$ref" ] || { diff <(echo "$ref") <(echo "$got"); false; }'
check "... generic/001 passes on stdout" grep -qE '^generic/001 +pass +[0-9]+s' "$T/whole.out"
check "... generic/006 fails on its output" grep -qE '^generic/006 +fail .*output mismatch' "$T/whole.out"
check "... the summary" grep -qE "^ext4/4k: ${#TESTS[@]} tests, [0-9]+ failures, [0-9]+ skipped, [0-9]+ seconds$" "$T/whole.out"
check "... the failed test's .out.bad came back" test -s "$run/results/ext4-4k/generic/006.out.bad"
check "... junit.xml is well-formed XML" xmllint --noout "$run/junit.xml"
if grep -qx "generic/008 fail" <<<"$ref"; then
	check "... the machine's kernel log has generic/008's WARNING" \
		grep -q 'WARNING: mini-fstests generic/008' "$run/kernel.log"
fi
check "... the machine made TEST with the configuration's mkfs" test "$(label "$TD")" != untouched
kh=$FSWB_HOME/data/ssh/known_hosts
check "... the host key is remembered in fswb's known_hosts" \
	grep -qF "$(cut -d' ' -f2 "$SSHD_HOSTKEY_PUB")" "$kh"
check "... nothing is left running on the machine" machine_idle
check "... nothing is left mounted on the machine" machine_unmounted

# ---- 3. remembered --------------------------------------------------------------------

NOWIPE=1 ssh_run again --yes-destroy "$TD,$SD,$LD" generic/001
check "a second run needs no host key flag (devices confirmed with --yes-destroy): generic/001 passes (rc=$rc; $(why again))" \
	eval '[ $rc -eq 0 ] && grep -qE "^generic/001 +pass " "$T/again.out"'

# ---- 4. a wrong user key ----------------------------------------------------------------

ssh-keygen -q -t ed25519 -N '' -C fswb-e2e-wrong -f "$T/wrong_key"
key_body "$T/wrong_key" >>"$T/key.body"
mark_log
ssh_run wrongkey -o key="$T/wrong_key" generic/001
show wrongkey
check "a key the machine does not take is refused (rc=$rc)" test "$rc" -ne 0 -a "$rc" -lt 124
check "... the message says authentication failed" eval 'both wrongkey | grep -qi "auth\|denied\|refused"'
check "... no test ran" no_test_ran wrongkey
check "... the server saw no login" eval '! log_since | grep -q "Accepted publickey"'

# ---- 5. devices ------------------------------------------------------------------------

mkfs.ext4 -q -F -L held "$TD" >/dev/null 2>&1
sshd_exec a mount -n "$TD" "$T/mnt/test"
ssh_run mounted generic/001
show mounted
check "a mounted TEST is refused (rc=$rc)" test "$rc" -ne 0 -a "$rc" -lt 124
check "... the message names it and where it is mounted" \
	eval 'both mounted | grep -F "$TD" | grep -qF "$T/mnt/test"'
check "... no test ran" no_test_ran mounted
check "... it is still mounted, untouched" eval 'sshd_mounts a | grep -q "^$TD " && [ "$(label "$TD")" = held ]'
sshd_exec a umount -n "$T/mnt/test"

mkfs.ext4 -q -F -L keep-me "$OD" >/dev/null 2>&1
ssh_run notwiped -o scratch="$OD" generic/001
show notwiped
check "a SCRATCH not named in wipe= is refused (rc=$rc)" test "$rc" -ne 0 -a "$rc" -lt 124
check "... the message names it with what it holds (lsblk: ext4, keep-me)" \
	eval 'both notwiped | grep -F "$OD" | grep -F ext4 | grep -qF keep-me'
check "... and the option to name it" eval 'both notwiped | grep -q "wipe=\|--yes-destroy"'
check "... no test ran" no_test_ran notwiped
check "... it is untouched" test "$(label "$OD")" = keep-me

# ---- 6. the connection dropped in the middle of a test -----------------------------

rm -f "$T/slow.started"
ssh_run_bg()
{
	mark_log
	start=$SECONDS
	timeout -k 10 300 "$FSWB" run "${SSH_OPTS[@]}" -o wipe="$TD,$SD,$LD" "$@" >"$T/drop.out" 2>"$T/drop.err" </dev/null &
	fswb_pid=$!
}
ssh_run_bg generic/013 generic/014
for ((i = 0; i < 1200; i++)); do
	[ -e "$T/slow.started" ] && break
	kill -0 "$fswb_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -e "$T/slow.started" ]; then
	pass "generic/013 started on the machine"
	sshd_kill_sessions a 2>/dev/null
	wait "$fswb_pid"
	rc=$? secs=$((SECONDS - start))
	check "fswb ends in bounded time after the drop (${secs}s, rc=$rc; $(why drop))" test "$rc" -lt 124
	got=$(statuses drop)
	check "... generic/013 is crashed (or passed after a reconnect): $(grep 013 <<<"$got")" \
		eval 'grep -qxE "generic/013 (crashed|pass)" <<<"$got" || { show drop 20; false; }'
	check "... the run went on: generic/014 passes" \
		eval 'grep -qx "generic/014 pass" <<<"$got" || { show drop 20; false; }'
	check "... the exit status says so (rc=$rc)" \
		eval '[ $rc -eq 1 ] || { [ $rc -eq 0 ] && grep -qx "generic/013 pass" <<<"$got"; }'
	check "... a new connection was made" eval '[ "$(log_since | grep -c "Accepted publickey")" -ge 2 ]'
else
	fail "generic/013 started on the machine" "$(why drop)"
	kill "$fswb_pid" 2>/dev/null
	wait "$fswb_pid"
fi
check "... nothing is left running on the machine" machine_idle
check "... nothing is left mounted on the machine" machine_unmounted

# ---- 7. a changed host key ----------------------------------------------------------------

if sshd_rekey a 2>"$T/rekey.err"; then
	mkfs.ext4 -q -F -L untouched "$TD" >/dev/null 2>&1
	ssh_run changed --accept-new-host-key generic/001
	show changed
	check "a changed host key is refused, even with --accept-new-host-key (rc=$rc)" \
		test "$rc" -ne 0 -a "$rc" -lt 124
	check "... loudly: the message says it changed" eval 'both changed | grep -qi "changed"'
	check "... with the new fingerprint ($SSHD_HOSTKEY_FP)" eval 'both changed | grep -qF "$SSHD_HOSTKEY_FP"'
	check "... no credential was offered" eval '! log_since | grep -q "Accepted publickey"'
	check "... no test ran" no_test_ran changed
	check "... TEST was not touched" test "$(label "$TD")" = untouched
	check "... the remembered key is still the old one" \
		eval '! grep -qF "$(cut -d" " -f2 "$SSHD_HOSTKEY_PUB")" "$kh"'
else
	fail "sshd_rekey" "$(cat "$T/rekey.err")"
fi

# ---- 8. what was shown and kept ---------------------------------------------------

# every output and every file fswb kept (not the server's own directory)
leaks=$(grep -rlFf "$T/key.body" "$FSWB_HOME" "$T"/*.out "$T"/*.err "$T/work" 2>/dev/null)
check "no private key is in any output, log or file of fswb" test -z "$leaks"
# (under ASan and UBSan, a report is on fswb's stderr whatever its status)
check "no sanitizer report on any fswb's stderr" \
	eval '! grep -l "Sanitizer\|runtime error:" "$T"/*.err'
check "nothing is left running on the machine at the end" machine_idle
check "nothing is left mounted on the machine at the end" machine_unmounted
check "nothing is left mounted on this host" eval '! grep -qF "$T/" /proc/self/mounts'
# no process of this host outside the machine's namespace has to do with
# this test's files (fswb's workers, an agent, check)
host_idle()
{
	local p ns left=""
	ns=" $(_sshd_ns_pids a | tr '\n' ' ') "
	for p in /proc/[0-9]*; do
		[[ $ns == *" ${p#/proc/} "* ]] && continue
		[ "${p#/proc/}" = $$ ] && continue
		if [[ "$(readlink "$p/cwd" 2>/dev/null)" == "$T"* ]] ||
			tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF "$T/"; then
			left+="${p#/proc/} $(tr '\0' ' ' 2>/dev/null <"$p/cmdline")"$'\n'
		fi
	done
	[ -z "$left" ] || { printf '%s' "$left"; false; }
}
check "no fswb, agent or check process is left on this host" host_idle
done_testing
