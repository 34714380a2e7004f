#!/usr/bin/env bash
# The real guest agent (src/agent/fswb-agent --stdio) on this host,
# as root, with the real mini-fstests (tests/fixtures/mini-fstests) on loop
# devices, driven by a host side written here in bash after the protocol in
# src/agent/agent_proto.h: HELLO and READY, the job as FILEs, RUN (the
# agent makes the test filesystem, runs check, streams its output, sends
# the results and check's exit status), RERUN of one test, POWEROFF, and the
# host closing the channel in the middle of a test. Under dash, busybox sh
# and bash. The dangerous tests are never selected.
. "$(dirname "$0")/../lib.sh"

AGENT=$SRCDIR/src/agent/fswb-agent
MINI=$SRCDIR/tests/fixtures/mini-fstests
# the agent sets FSWB_GUEST=1 for check; nothing here selects a test that
# looks at it
unset FSWB_GUEST
# seconds to wait for a frame
WAIT=${AGENT_E2E_WAIT:-120}

give_up()
{
	skip "the agent with mini-fstests on loop devices" "$1"
	done_testing
	exit
}

[ "$(id -u)" -eq 0 ] || give_up "needs root (losetup, mkfs, mount)"
for p in losetup mkfs.ext4 mount umount mountpoint blkid tar dash; do
	command -v "$p" >/dev/null || give_up "$p is not installed"
done
# the driver reads payloads with head -c, which must not read ahead
[ "$(printf 'ab' | { head -c 1 >/dev/null; cat; })" = b ] || give_up "head -c reads ahead here (not GNU head)"

TD="" SD=""
cleanup_devices()
{
	local m i
	for m in "$T/mnt/test" "$T/mnt/scratch"; do
		for i in 1 2 3; do
			mountpoint -q "$m" 2>/dev/null || break
			umount "$m" 2>/dev/null || sleep 0.2
		done
		mountpoint -q "$m" 2>/dev/null && umount -l "$m"
	done
	[ -n "$SD" ] && losetup -d "$SD"
	[ -n "$TD" ] && losetup -d "$TD"
	return 0
}
at_exit cleanup_devices

truncate -s 128M "$T/test.img" "$T/scratch.img" || give_up "cannot create sparse images in $T"
TD=$(losetup -f --show "$T/test.img" 2>/dev/null) || give_up "losetup cannot attach a loop device here"
SD=$(losetup -f --show "$T/scratch.img" 2>/dev/null) || give_up "losetup cannot attach a second loop device"
cp -a "$MINI" "$T/mini"
rm -rf "$T/mini/results" "$T/mini/local.config"
M=$T/mini
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"

# ---- the host side ----------------------------------------------------------

# Quoting as src/core/util.h's sq_quote does (always quoting is as good).
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
# Words, each quoted, joined by spaces.
sqw()
{
	local out="" w
	for w; do out+="${out:+ }$(sq "$w")"; done
	printf '%s' "$out"
}

# agent_start NAME SHELL...: the agent under SHELL, its channel on fds 5 and 6
APID=""
agent_start()
{
	local name=$1
	shift
	W=$T/work-$name
	mkfifo "$T/to-$name" "$T/from-$name"
	FSWB_AGENT_HB=1 "$@" "$AGENT" --stdio --workdir "$W" \
		<"$T/to-$name" >"$T/from-$name" 2>"$T/agent-$name.err" &
	APID=$!
	exec 5>"$T/to-$name" 6<"$T/from-$name"
	F=$T/frames-$name
	: >"$F.log"
	: >"$F.out"
	: >"$F.logtext"
	: >"$F.err"
	HBS=0 OUTS=0 STREAMED=0
}
agent_kill()
{
	[ -n "$APID" ] && kill -9 "$APID" 2>/dev/null
	APID=""
	return 0
}
at_exit agent_kill

# next_frame: one frame into FT (type), FA (arguments), FP (payload file)
next_frame()
{
	local line words last
	while :; do
		IFS= read -r -t "$WAIT" line <&6 || return 1
		[ -n "$line" ] && break
	done
	printf '%s\n' "$line" >>"$F.log"
	read -ra words <<<"$line"
	FT=${words[0]}
	FA=("${words[@]:1}")
	FP=""
	last=${words[${#words[@]} - 1]}
	if [ ${#words[@]} -gt 1 ] && [[ $last =~ ^\+[0-9]+$ ]]; then
		unset 'FA[${#FA[@]}-1]'
		FP=$F.payload
		head -c "${last#+}" <&6 >"$FP"
		[ "$(wc -c <"$FP")" -eq "${last#+}" ] || return 1
	fi
	case $FT in
	OUT)
		cat "$FP" >>"$F.out"
		OUTS=$((OUTS + 1))
		[ -n "$(tail -c 1 "$FP")" ] && STREAMED=1 # ended inside a line
		;;
	LOG) cat "$FP" >>"$F.logtext" ;;
	ERR) cat "$FP" >>"$F.err" ;;
	HB) HBS=$((HBS + 1)) ;;
	RESULT) cp "$FP" "$F.result.tgz" ;;
	esac
	return 0
}

# expect TYPE: frames until one of TYPE (false if the channel ends first)
expect()
{
	while next_frame; do
		[ "$FT" = "$1" ] && return 0
	done
	echo "no $1 frame; the agent sent:" >&2
	tail -n 20 "$F.log" >&2
	return 1
}

send_file()
{
	printf 'FILE %s %s +%d\n' "$1" "$2" "$(wc -c <"$3")" >&5
	cat "$3" >&5
}

# send_job TESTS...: job.env, local.config and exclude, for check's tests
send_job()
{
	cat >"$T/local.config" <<-EOF
		export FSTYP=ext4
		export TEST_DEV=$TD
		export TEST_DIR=$T/mnt/test
		export SCRATCH_DEV=$SD
		export SCRATCH_MNT=$T/mnt/scratch
	EOF
	printf 'generic/003 # excluded by the job\n' >"$T/exclude"
	cat >"$T/job.env" <<-EOF
		FSWB_PROTO=1
		FSWB_JOB_DIR=$(sq "$W/job")
		FSWB_FSTESTS_DIR=$(sq "$M")
		FSWB_FSTYP=ext4
		FSWB_CONFIG=local.config
		FSWB_RESULT_BASE=''
		FSWB_MOUNT_POINTS=$(sq "$(sqw "$T/mnt/test" "$T/mnt/scratch")")
		FSWB_MKFS_TEST=$(sq "$(sqw mkfs.ext4 -q -F -L "fswb $1" "$TD")")
		FSWB_CHECK_OPTS=$(sq "$(sqw -R xunit -T)")
		FSWB_CHECK_TESTS=$(sq "$(sqw -x dangerous -E "$W/job/exclude" "$@")")
		FSWB_CHECK_ENV=''
	EOF
	send_file job.env 0644 "$T/job.env"
	send_file local.config 0644 "$T/local.config"
	send_file exclude 0644 "$T/exclude"
}

# the agent's process has ended, within $1 seconds; its status in $astatus
ended_within()
{
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		if ! kill -0 "$APID" 2>/dev/null; then
			wait "$APID"
			astatus=$?
			APID=""
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# no process is left with its working directory in the mini-fstests copy
no_check_left()
{
	local p
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/cwd" 2>/dev/null) == "$M"* ]] && { echo "left: $(tr '\0' ' ' <"$p/cmdline")"; return 1; }
	done
	return 0
}

hello_ok()
{
	[ "$FT" = HELLO ] && [ "${FA[*]}" = "1 0.1.0 $(uname -m) $(uname -r | tr ' ' _)" ]
}

# ---- 1. a whole session under dash --------------------------------------------

wipefs -a -q "$TD" 2>/dev/null
agent_start dash dash
check "dash: the agent says HELLO first, with its protocol, version, arch and kernel" \
	eval 'next_frame && hello_ok'
check "dash: then READY" eval 'next_frame && [ "$FT" = READY ]'
send_job dash generic/001 generic/003 generic/004 generic/006
printf 'RUN\n' >&5
if expect EXIT; then
	pass "dash: RUN ends with EXIT"
	check "dash: EXIT 1: a test failed" test "${FA[0]}" = 1
else
	fail "dash: RUN ends with EXIT" "$(cat "$T/agent-dash.err")"
fi
check "dash: RESULT came just before EXIT" eval 'tail -n 2 "$F.log" | head -n 1 | grep -q "^RESULT +[0-9]*$"'
check "dash: READY after EXIT" eval 'next_frame && [ "$FT" = READY ]'
check "dash: the agent made the test filesystem with the job's mkfs" \
	test "$(blkid -o value -s LABEL "$TD")" = "fswb dash"
check "dash: mkfs was reported as LOG" grep -q "making the test filesystem: mkfs.ext4 -q -F -L" "$F.logtext"
check "dash: OUT is byte for byte what check printed" cmp "$F.out" "$W/check.out"
check "dash: OUT has check's header" grep -qx "FSTYP         -- ext4" "$F.out"
check "dash: the excluded test is [expunged]" grep -qE '^generic/003 +\[expunged\]$' "$F.out"
check "dash: check's summary" grep -qx "Ran: generic/001 generic/004 generic/006" "$F.out"
check "dash: check's failures" grep -qx "Failures: generic/006" "$F.out"
check "dash: heartbeats while check ran" test "$HBS" -ge 1
mkdir -p "$T/r1"
check "dash: RESULT unpacks" tar -xzf "$F.result.tgz" -C "$T/r1"
check "dash: ... to a results directory with result.xml" grep -q 'testcase classname="xfstests.global" name="generic/001"' "$T/r1/result.xml"
check "dash: ... and the failed test's .out.bad" test -f "$T/r1/generic/006.out.bad"
check "dash: ... and check.log" grep -qx "Failures: generic/006" "$T/r1/check.log"
command -v xmllint >/dev/null && check "dash: result.xml is well-formed" xmllint --noout "$T/r1/result.xml"

: >"$F.out"
HBS=0
printf 'RERUN generic/001\n' >&5
if expect EXIT; then
	pass "dash: RERUN ends with EXIT"
	check "dash: RERUN's EXIT 0: it passed" test "${FA[0]}" = 0
else
	fail "dash: RERUN ends with EXIT" "$(cat "$T/agent-dash.err")"
fi
check "dash: RERUN ran that test alone" grep -qx "Ran: generic/001" "$F.out"
check "dash: RERUN: Passed all 1 tests" grep -qx "Passed all 1 tests" "$F.out"
check "dash: RERUN's OUT is what check printed" cmp "$F.out" "$W/check.out"
mkdir -p "$T/r2"
check "dash: RERUN's RESULT unpacks" tar -xzf "$F.result.tgz" -C "$T/r2"
check "dash: RERUN's result.xml has that test only" test "$(grep -c '<testcase ' "$T/r2/result.xml")" -eq 1
check "dash: RERUN keeps the earlier results" test -f "$T/r2/generic/006.out.bad"
check "dash: RERUN's check.log has both runs" test "$(grep -c '^Ran:' "$T/r2/check.log")" -eq 2
check "dash: READY after RERUN" eval 'next_frame && [ "$FT" = READY ]'
printf 'SHELL\n' >&5
check "dash: SHELL over --stdio is refused" eval 'next_frame && [ "$FT" = ERR ] && grep -q "no shell over this channel" "$FP"'
check "dash: READY after SHELL" eval 'next_frame && [ "$FT" = READY ]'
printf 'POWEROFF\n' >&5
check "dash: POWEROFF: BYE" eval 'next_frame && [ "$FT" = BYE ]'
check "dash: ... and the channel closes" eval '! next_frame'
if ended_within 15; then
	check "dash: the agent exits 0" test "$astatus" -eq 0
else
	fail "dash: the agent exits 0" "still running 15 s after BYE"
fi
check "dash: the agent unmounted the test filesystem" eval '! mountpoint -q "$T/mnt/test"'
check "dash: the agent left no job files" test ! -e "$W"
check "dash: no check process is left" no_check_left
exec 5>&- 6<&-

# ---- 2. busybox sh: the host goes away in the middle of a test ------------------

if command -v busybox >/dev/null; then
	agent_start busybox busybox sh
	check "busybox: HELLO" eval 'next_frame && hello_ok'
	check "busybox: READY" eval 'next_frame && [ "$FT" = READY ]'
	send_job busybox generic/012
	printf 'RUN\n' >&5
	seen=""
	while next_frame; do
		if grep -q '^generic/012' "$F.out"; then
			seen=1
			break
		fi
	done
	check "busybox: check started generic/012 (it runs about 2 s)" test -n "$seen"
	check "busybox: its name was streamed before its outcome" test "$STREAMED" = 1
	check "busybox: the test filesystem is the job's" test "$(blkid -o value -s LABEL "$TD")" = "fswb busybox"
	exec 5>&- 6<&-
	if ended_within 20; then
		pass "busybox: the agent ends when the channel closes mid-test"
		check "busybox: ... with status 0" test "$astatus" -eq 0
	else
		fail "busybox: the agent ends when the channel closes mid-test" "still running after 20 s"
	fi
	check "busybox: check was stopped" no_check_left
	check "busybox: the test filesystem was unmounted" eval '! mountpoint -q "$T/mnt/test"'
else
	skip "busybox: the agent ends when the channel closes mid-test" "busybox is not installed"
fi

# ---- 3. bash: a short job; the host closes the channel while the agent waits -----

agent_start bash bash
check "bash: HELLO" eval 'next_frame && hello_ok'
check "bash: READY" eval 'next_frame && [ "$FT" = READY ]'
send_job bash generic/001 generic/003
printf 'RUN\n' >&5
if expect EXIT; then
	check "bash: EXIT 0: generic/001 passed, generic/003 was excluded" test "${FA[0]}" = 0
else
	fail "bash: EXIT 0: generic/001 passed, generic/003 was excluded" "$(cat "$T/agent-bash.err")"
fi
check "bash: OUT is what check printed" cmp "$F.out" "$W/check.out"
check "bash: Passed all 1 tests" grep -qx "Passed all 1 tests" "$F.out"
check "bash: READY" eval 'next_frame && [ "$FT" = READY ]'
exec 5>&-
if ended_within 15; then
	pass "bash: the agent ends when the host closes the channel"
	check "bash: ... with status 0" test "$astatus" -eq 0
else
	fail "bash: the agent ends when the host closes the channel" "still running after 15 s"
fi
exec 6<&-
check "bash: the test filesystem was unmounted" eval '! mountpoint -q "$T/mnt/test"'
check "bash: no check process is left" no_check_left

done_testing
