#!/usr/bin/env bash
# mini-fstests (tests/fixtures/mini-fstests) on real loop devices, as root:
# its check's stdout has the shapes of real fstests output (each shape is
# checked against the real runs in tests/fixtures/fstests-runs), it writes
# the results/ files fstests writes, a valid xunit report (checked against
# fstests' schema when a real fstests tree is there), and its options (-g -x -e -E -X -s -n -T -b -L -R) select, exclude
# and report as fstests' check does. The dangerous tests (panic, hang) are
# never part of -g auto/quick/smoketest, and they refuse to run here.
. "$(dirname "$0")/../lib.sh"

MINI=$SRCDIR/tests/fixtures/mini-fstests
FIX=${FSWB_FIXTURES:-$SRCDIR/tests/fixtures/fstests-runs}
# fstests' xunit schema (doc/xunit.xsd of an fstests checkout; never copied
# here): FSTESTS_XSD names it, no fixed path outside this tree is looked at
XSD=${FSTESTS_XSD:-}
NS="https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git"

# never let anything here look like a disposable guest
unset FSWB_GUEST

give_up()
{
	skip "mini-fstests on loop devices" "$1"
	done_testing
	exit
}

[ "$(id -u)" -eq 0 ] || give_up "needs root (losetup, mount)"
for p in losetup mkfs.ext4 mount umount debugfs e2fsck findmnt xmllint; do
	command -v "$p" >/dev/null || give_up "$p is not installed"
done

TD="" SD=""
cleanup_devices()
{
	local m i
	for m in "$T/mnt/test" "$T/mnt/scratch"; do
		for i in 1 2 3; do
			mountpoint -q "$m" || break
			umount "$m" 2>/dev/null || sleep 0.2
		done
		mountpoint -q "$m" && umount -l "$m"
	done
	[ -n "$SD" ] && losetup -d "$SD"
	[ -n "$TD" ] && losetup -d "$TD"
	return 0
}
at_exit cleanup_devices

mkdir -p "$T/mnt/test" "$T/mnt/scratch" "$T/tmp"
truncate -s 128M "$T/test.img" "$T/scratch.img" || give_up "cannot create sparse images in $T"
TD=$(losetup -f --show "$T/test.img" 2>/dev/null) || give_up "losetup cannot attach a loop device here"
SD=$(losetup -f --show "$T/scratch.img" 2>/dev/null) || give_up "losetup cannot attach a second loop device"
mkfs.ext4 -q -F "$TD" >/dev/null 2>&1 || give_up "mkfs.ext4 on $TD failed"
mount -t ext4 "$TD" "$T/mnt/test" 2>/dev/null || give_up "cannot mount ext4 on a loop device here"
umount "$T/mnt/test"

cp -a "$MINI" "$T/mini"
rm -rf "$T/mini/results" "$T/mini/local.config"
M=$T/mini
R=$M/results
# the kernel's config, as fswb gives it to a guest (KCONFIG_PATH)
printf 'CONFIG_EXT4_FS=y\nCONFIG_QFMT_V2=m\n' >"$T/kernel.config"
cat >"$M/local.config" <<EOF
export KCONFIG_PATH=$T/kernel.config
export FSTYP=ext4
export TEST_DEV=$TD
export TEST_DIR=$T/mnt/test
export SCRATCH_DEV=$SD
export SCRATCH_MNT=$T/mnt/scratch
EOF
# check's own temporary files go here, so that leftovers show
export TMPDIR=$T/tmp

# run_check OUT [check arguments]: stdout to $T/OUT, exit status in $rc
run_check()
{
	local out=$1
	shift
	(cd "$M" && ./check "$@") >"$T/$out" 2>"$T/$out.err"
	rc=$?
}

# The file in array L; first RE prints the index of the first line of L
# matching the bash regular expression RE (-1 if none).
load()
{
	mapfile -t L <"$1"
}
first()
{
	local i
	for ((i = 0; i < ${#L[@]}; i++)); do
		[[ ${L[i]} =~ $1 ]] && echo "$i" && return
	done
	echo -1
}

# A test name padded as check pads it (to 12 columns, the longest name,
# "selftest/NNN"), then the previous time: nothing or " Ns ... ".
pad()
{
	printf '%s%*s' "$1" $((12 - ${#1})) ''
}
LAST='(       | [0-9]+s \.\.\. )'

# has FILE RE: some line of FILE matches RE
has()
{
	load "$1"
	[ "$(first "$2")" -ge 0 ]
}

# shape DESC FIXTURE_CASE TEMPLATE OUR_FILE: our output has a line of the
# shape TEMPLATE, where @T@ is replaced by the test name (given as
# "fixture_test:our_test") and @D@ by the scratch device; and when the real
# fixtures are here, the same template matches the real stdout too.
shape()
{
	local desc=$1 fcase=$2 tmpl=$3 ours=$4 names=$5 fdev=${6:-/dev/vdc}
	local ftest=${names%%:*} otest=${names#*:} re

	re=${tmpl//@N@/$(pad "$otest")}
	re=${re//@T@/$otest}
	re=${re//@D@/$SD}
	if has "$T/$ours" "$re"; then
		pass "$desc"
	else
		fail "$desc" "no line matches /$re/ in:
$(cat "$T/$ours")"
	fi
	if [ -z "$fcase" ]; then
		return
	elif [ -f "$FIX/$fcase/stdout.txt" ]; then
		re=${tmpl//@N@/$(pad "$ftest")}
		re=${re//@T@/$ftest}
		re=${re//@D@/$fdev}
		check "shape of '$desc' matches the real $fcase fixture" has "$FIX/$fcase/stdout.txt" "$re"
	else
		skip "shape of '$desc' matches the real $fcase fixture" "no fixtures at $FIX"
	fi
}

# mismatch_block FILE TEST: after the "- output mismatch" line, check's
# shape of the diff: ---, +++ and @@ lines, at most DIFF_LENGTH lines of
# diff, "...", then the "(Run 'diff -u ...'  to see the entire diff)" hint,
# all indented by 4 spaces.
mismatch_block()
{
	local t=$2 i k n=0
	load "$1"
	i=$(first "^$t +.*- output mismatch \(see /.+/results//$t\.out\.bad\)$")
	[ "$i" -ge 0 ] || { echo "no mismatch line for $t"; return 1; }
	[[ ${L[i + 1]} =~ ^"    --- tests/$t.out"$'\t' ]] || { echo "bad --- line: ${L[i + 1]}"; return 1; }
	[[ ${L[i + 2]} =~ ^"    +++ /".+"/results//$t.out.bad"$'\t' ]] || { echo "bad +++ line: ${L[i + 2]}"; return 1; }
	[[ ${L[i + 3]} =~ ^"    @@ -"[0-9,]+" +"[0-9,]+" @@"$ ]] || { echo "bad @@ line: ${L[i + 3]}"; return 1; }
	for ((k = i + 4; k < ${#L[@]}; k++)); do
		[ "${L[k]}" = "    ..." ] && break
		[[ ${L[k]} =~ ^"    "[-+\ ] ]] || { echo "bad diff line: ${L[k]}"; return 1; }
		n=$((n + 1))
	done
	[ $n -le 7 ] || { echo "$n diff lines: more than DIFF_LENGTH allows"; return 1; }
	[ "${L[k]}" = "    ..." ] || { echo "no '    ...' line"; return 1; }
	[[ ${L[k + 1]} =~ ^"    (Run 'diff -u /".+"/tests/$t.out /".+"/results//$t.out.bad'  to see the entire diff)"$ ]] ||
		{ echo "bad hint line: ${L[k + 1]}"; return 1; }
}

block()
{
	local desc=$1 fcase=$2 ftest=$3 ours=$4 otest=$5
	check "$desc" mismatch_block "$T/$ours" "$otest"
	if [ -f "$FIX/$fcase/stdout.txt" ]; then
		check "shape of '$desc' matches the real $fcase fixture" mismatch_block "$FIX/$fcase/stdout.txt" "$ftest"
	else
		skip "shape of '$desc' matches the real $fcase fixture" "no fixtures at $FIX"
	fi
}

# line_after FILE RE1 RE2: the line after the first one matching RE1
# matches RE2
line_after()
{
	local i
	load "$1"
	i=$(first "$2")
	[ "$i" -ge 0 ] && [[ ${L[i + 1]} =~ $3 ]]
}

# xunit: well-formed always; valid against fstests' schema when it is here
# (the report, like fstests', leaves its elements out of the schema's
# namespace: validate a copy that puts them in)
xunit_valid()
{
	local f=$1 desc=$2
	check "$desc: result.xml is well-formed" xmllint --noout "$f"
	if [ -n "$XSD" ] && [ -f "$XSD" ]; then
		sed "0,/^<testsuite\$/s||<testsuite xmlns=\"$NS\"|" "$f" >"$T/ns.xml"
		check "$desc: result.xml validates against fstests' xunit.xsd" \
			xmllint --noout --schema "$XSD" "$T/ns.xml"
	else
		skip "$desc: result.xml validates against fstests' xunit.xsd" "no schema: FSTESTS_XSD=${XSD:-unset} (fstests' doc/xunit.xsd)"
	fi
}

kmsg=false
[ -w /dev/kmsg ] && kmsg=true

#
# The group files are what tools/mkgroupfile makes of the tests' headers,
# and every test has an fstests-style header and golden output.
#
for d in "$M"/tests/*/; do
	d=${d%/}
	dn=${d##*/}
	check "tests/$dn/group.list matches the tests' _begin_fstest groups" \
		diff -u "$d/group.list" <("$M/tools/mkgroupfile" "tests/$dn" -)
	for t in "$d"/[0-9][0-9][0-9]; do
		n=${t##*/}
		hdr_ok=$(sed -n '5p;6p' "$t" | tr '\n' '|')
		desc=$(sed -n '7p' "$t")
		if [ -x "$t" ] && [ "$hdr_ok" = "# FS QA Test No. $n|#|" ] && [[ $desc =~ ^"# "[A-Z] ]] &&
			[ "$(head -n 1 "$t.out")" = "QA output created by $n" ]; then
			pass "$dn/$n has a header, a description and a golden output"
		else
			fail "$dn/$n has a header, a description and a golden output" "lines 5-7: $hdr_ok $desc"
		fi
	done
done

#
# 1. -g auto: every outcome but the dangerous ones
#
run_check auto.out -R xunit -g auto
check "-g auto exits 1 (there are failures)" test "$rc" -eq 1
check "-g auto prints nothing on stderr" test ! -s "$T/auto.out.err"

shape "header FSTYP" A-plain-pass-notrun '^FSTYP         -- ext4$' auto.out x:x
shape "header PLATFORM" A-plain-pass-notrun '^PLATFORM      -- Linux/[^ ]+ [^ ]+ [^ ]+ #.+$' auto.out x:x
shape "header MKFS_OPTIONS" A-plain-pass-notrun '^MKFS_OPTIONS  -- -F @D@$' auto.out x:x
shape "header MOUNT_OPTIONS" A-plain-pass-notrun "^MOUNT_OPTIONS -- -o acl,user_xattr @D@ /.+\$" auto.out x:x
load "$T/auto.out"
check "a blank line ends the header" test "${L[4]}" = ""

for t in ext4/001 generic/001 generic/002 generic/003 generic/012; do
	shape "$t passes" G-exclude "^@N@$LAST [0-9]+s\$" auto.out "generic/005:$t"
done
# the kernel's config, read as fstests reads it: KCONFIG_PATH first
printf 'CONFIG_EXT2_FS=y\n# CONFIG_EXT4_FS is not set\n' >"$T/kernel.config"
run_check kconfig.out ext4/001
check "ext4/001 is not run on a kernel config without CONFIG_EXT4_FS" \
	grep -qE '^ext4/001 .*\[not run\] Installed kernel not built with CONFIG_EXT4_FS$' "$T/kconfig.out"
printf 'CONFIG_EXT4_FS=y\nCONFIG_QFMT_V2=m\n' >"$T/kernel.config"
shape "generic/004 is not run for LOGWRITES_DEV" "" \
	"^@N@$LAST\\[not run\\] This test requires a valid \\\$LOGWRITES_DEV\$" auto.out ":generic/004"
shape "generic/005 is not run for a missing program" "" \
	"^@N@$LAST\\[not run\\] mini-fstests-absent-tool utility required, skipped this test\$" auto.out ":generic/005"
shape "generic/006 is an output mismatch" B-mismatch \
	"^@N@$LAST- output mismatch \\(see /.+/results//@T@\\.out\\.bad\\)\$" auto.out "generic/002:generic/006"
block "generic/006's diff is shown as check shows it" B-mismatch generic/002 auto.out generic/006
shape "generic/007 fails with exit status 1" D-exit-status \
	"^@N@$LAST\\[failed, exit status 1\\]- output mismatch \\(see /.+/results//@T@\\.out\\.bad\\)\$" \
	auto.out "generic/006:generic/007"
block "generic/007's diff is shown as check shows it" D-exit-status generic/006 auto.out generic/007
shape "generic/009 fails the post-test fsck of SCRATCH_DEV" E-fsck \
	"^@N@${LAST}_check_generic_filesystem: filesystem on @D@ is inconsistent\$" auto.out "generic/015:generic/009"
for f in "$T/auto.out" "$FIX/E-fsck/stdout.txt"; do
	[ -f "$f" ] || continue
	t=generic/009
	[ "$f" = "$T/auto.out" ] || t=generic/015
	check "the fsck failure of $t is followed by '(see ....full for details)' ($(basename "$(dirname "$f")"))" \
		line_after "$f" "^$t +_check_generic_filesystem" "^\\(see /.+/results//$t\\.full for details\\)$"
	check "... and by a blank line ($(basename "$(dirname "$f")"))" \
		line_after "$f" "^\\(see /.+/results//$t\\.full for details\\)$" '^$'
done
if $kmsg; then
	shape "generic/008's WARNING fails the dmesg check" "" \
		"^@N@${LAST}_check_dmesg: something found in dmesg \\(see /.+/results//@T@\\.dmesg\\)\$" auto.out ":generic/008"
	check "the dmesg failure is followed by a blank line" \
		line_after "$T/auto.out" "^generic/008 +_check_dmesg" '^$'
	check "results/generic/008.dmesg has the WARNING" grep -q "WARNING: mini-fstests generic/008" "$R/generic/008.dmesg"
	check "results/generic/008.dmesg starts at check's kmsg marker" \
		grep -qE "run fstests generic/008 at [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}" <(head -n 1 "$R/generic/008.dmesg")
	check "check wrote its kmsg marker before generic/001" grep -q "run fstests generic/001 at " <(dmesg)
else
	skip "generic/008's WARNING fails the dmesg check" "/dev/kmsg is not writable"
fi
check "-g auto does not select generic/010 (panic)" bash -c "! grep -q '^generic/010' '$T/auto.out'"
check "-g auto does not select generic/011 (hang)" bash -c "! grep -q '^generic/011' '$T/auto.out'"
check "-g auto does not select the selftest directory" bash -c "! grep -q '^selftest/' '$T/auto.out'"

ran="ext4/001 generic/001 generic/002 generic/003 generic/004 generic/005 generic/006 generic/007 generic/008 generic/009 generic/012"
if $kmsg; then
	failures="generic/006 generic/007 generic/008 generic/009" nfail=4 notrun="generic/004 generic/005"
else
	failures="generic/006 generic/007 generic/009" nfail=3 notrun="generic/004 generic/005 generic/008"
fi
shape "summary Ran: line" A-plain-pass-notrun '^Ran: [a-z0-9]+/[0-9]{3}( [a-z0-9]+/[0-9]{3})*$' auto.out x:x
check "Ran: lists every test of -g auto" grep -qx "Ran: $ran" "$T/auto.out"
shape "summary Not run: line" A-plain-pass-notrun '^Not run: [a-z0-9]+/[0-9]{3}( [a-z0-9]+/[0-9]{3})*$' auto.out x:x
check "Not run: lists the not-run tests" grep -qx "Not run: $notrun" "$T/auto.out"
shape "summary Failures: line" B-mismatch '^Failures: [a-z0-9]+/[0-9]{3}( [a-z0-9]+/[0-9]{3})*$' auto.out x:x
check "Failures: lists the failed tests" grep -qx "Failures: $failures" "$T/auto.out"
shape "summary Failed N of M line" B-mismatch '^Failed [0-9]+ of [0-9]+ tests$' auto.out x:x
check "Failed $nfail of 11 tests" grep -qx "Failed $nfail of 11 tests" "$T/auto.out"
shape "summary Xunit report: line" A-plain-pass-notrun '^Xunit report: /.+/results//result\.xml$' auto.out x:x
load "$T/auto.out"
check "stdout ends with a blank line" test "${L[${#L[@]} - 1]}" = ""

for f in check.log check.time check.full result.xml generic/001.full generic/004.notrun generic/005.notrun \
	generic/006.out.bad generic/007.out.bad generic/009.full; do
	check "results/$f exists" test -f "$R/$f"
done
check "results/generic/004.notrun gives the reason" grep -qx 'This test requires a valid $LOGWRITES_DEV' "$R/generic/004.notrun"
check "results/generic/009.full has the fsck output" grep -q '^\*\*\* fsck.ext4 output \*\*\*$' "$R/generic/009.full"
check "results/generic/009.full has the mount table" grep -q '^\*\*\* mount output \*\*\*$' "$R/generic/009.full"
check "results/generic/001.full has check's unmount line, as in fstests" grep -q "^umount: $SD: not mounted.$" "$R/generic/001.full"
check "results/check.log has the summary" grep -qx "Failures: $failures" "$R/check.log"
check "results/check.log has the kernel version" grep -qx "Kernel version: $(uname -r)" "$R/check.log"
check "results/check.time has the passed tests" grep -qE '^generic/001 [0-9]+$' "$R/check.time"
check "results/check.time has no failed test" bash -c "! grep -q '^generic/006 ' '$R/check.time'"
xunit_valid "$R/result.xml" "-g auto"
nnotrun=$(wc -w <<<"$notrun")
check "result.xml counts failures, skipped and tests" \
	grep -qx " failures=\"$nfail\" skipped=\"$nnotrun\" tests=\"11\" time=\"[0-9]*\"" "$R/result.xml"
check "result.xml has 11 testcases" test "$(grep -c '<testcase classname="xfstests.global"' "$R/result.xml")" -eq 11
check "result.xml gives generic/004's skip reason" grep -qF '<skipped message="This test requires a valid $LOGWRITES_DEV" />' "$R/result.xml"
check "result.xml gives generic/006's failure" grep -qF '<failure message="- output mismatch (see ' "$R/result.xml"
check "result.xml has generic/006's golden diff" grep -qx -- "--- tests/generic/006.out.*" "$R/result.xml"
check "result.xml has the same properties as fstests'" \
	grep -q '<property name="SCRATCH_DEV_SIZE_KB" value="131072"/>' "$R/result.xml"
if [ -f "$FIX/A-plain-pass-notrun/results/result.xml" ]; then
	# KCONFIG_PATH is there when set, as in fstests; the fixture's run had none
	check "result.xml has the property names of the real fixture, and KCONFIG_PATH" diff -u \
		<(grep -o '<property name="[A-Z_]*"' "$FIX/A-plain-pass-notrun/results/result.xml" |
			sed 's/^<property name="KERNEL"$/<property name="KCONFIG_PATH"\n&/') \
		<(grep -o '<property name="[A-Z_]*"' "$R/result.xml")
fi
check "no check temporary file is left" test -z "$(ls -A "$TMPDIR")"

#
# 2. a second run shows the previous time
#
run_check again.out generic/001 generic/006
shape "a test with a previous time shows 'Ns ...'" "" '^@N@ [0-9]+s \.\.\.  [0-9]+s$' again.out ":generic/001"
shape "a failed test has no previous time" "" '^@N@       - output mismatch' again.out ":generic/006"

#
# 3. -n lists the tests and runs none
#
before=$(wc -l <"$R/check.log")
run_check list.out -n -g auto -e generic/003
check "-n exits 0" test "$rc" -eq 0
load "$T/list.out"
listed=$(printf '%s\n' "${L[@]:5}" | sed '/^$/d' | tr '\n' '|')
check "-n lists the tests, padded, one per line (and [expunged] for -e)" test "$listed" = \
	"ext4/001    |generic/001 |generic/002 |generic/003        [expunged]|generic/004 |generic/005 |generic/006 |generic/007 |generic/008 |generic/009 |generic/012 |"
check "-n runs nothing (no summary, check.log untouched)" test "$(wc -l <"$R/check.log")" -eq "$before"
for g in quick smoketest; do
	run_check list-$g.out -n -g $g
	check "-g $g does not select the dangerous tests" bash -c "! grep -qE '^generic/01[01]' '$T/list-$g.out'"
done
run_check list-smoke.out -n -g smoketest
check "-g smoketest selects the passing smoke tests" test "$(grep -cE '^(ext4|generic)/0' "$T/list-smoke.out")" -eq 4
run_check list-panic.out -n -g dangerous_panic
check "-g dangerous_panic selects generic/010 only" test "$(grep -E '^[a-z]' "$T/list-panic.out" | tr -d ' ')" = generic/010
run_check list-self.out -n -g selftest
check "-g selftest alone is not a group (only selftest/selftest is)" grep -qx 'Group "selftest" is empty or not defined?' "$T/list-self.out"
run_check list-self2.out -n -g selftest/selftest
check "-g selftest/selftest selects the selftest directory" grep -qx 'selftest/002' "$T/list-self2.out"

#
# 4. exclusions: -e, -E (with a comment), -X (per-directory file), -x group
#
printf '# tests to skip\ngeneric/006 # known to fail\n' >"$T/exclude.txt"
printf '# per-directory exclusions\n007\n' >"$M/tests/generic/mini.exclude"
run_check excl.out -R xunit -e generic/003,generic/005 -E "$T/exclude.txt" -X mini.exclude -x dmesg,scratch 'generic/00[1-9]'
check "exclusions: exit 0" test "$rc" -eq 0
for t in generic/003 generic/005 generic/006 generic/007; do
	shape "$t is [expunged]" G-exclude '^@N@ {7}\[expunged\]$' excl.out "generic/014:$t"
done
for t in generic/002 generic/008 generic/009; do
	check "-x removes $t without a word" bash -c "! grep -q '^$t' '$T/excl.out'"
done
check "exclusions: Ran: has only what ran" grep -qx "Ran: generic/001 generic/004" "$T/excl.out"
check "exclusions: expunged tests are not in result.xml" bash -c "! grep -q 'name=\"generic/003\"' '$R/result.xml'"
check "exclusions: result.xml has tests=\"2\"" grep -q ' tests="2" ' "$R/result.xml"
rm -f "$M/tests/generic/mini.exclude"

#
# 5. the dangerous tests refuse to run here
#
guard=$(cd "$M" && bash -c '. ./common/rc && if _in_disposable_guest; then echo guest; else echo "refused: $_guest_refusal"; fi' 2>&1)
if [[ $guard == refused:* ]]; then
	pass "the guard refuses this machine ($guard)"
	run_check danger.out -R xunit generic/010 generic/011
	for t in generic/010 generic/011; do
		shape "$t refuses to run here (not run)" "" \
			'^@N@'"$LAST"'\[not run\] dangerous test, runs only in a disposable guest VM: .+$' danger.out ":$t"
	done
	check "dangerous tests: Not run: lists both" grep -qx "Not run: generic/010 generic/011" "$T/danger.out"
else
	fail "the guard refuses this machine" "it said '$guard'; the dangerous tests were not run"
fi

#
# 6. -T timestamps, as in the fixture A-plain-pass-notrun
#
run_check stamps.out -T generic/001 generic/004
shape "-T: a pass has start and end stamps" A-plain-pass-notrun \
	"^@N@$LAST \\[[0-9]{2}:[0-9]{2}:[0-9]{2}\\] \\[[0-9]{2}:[0-9]{2}:[0-9]{2}\\] [0-9]+s\$" stamps.out "generic/029:generic/001"
shape "-T: a not-run test ends with [not run]" A-plain-pass-notrun \
	"^@N@$LAST \\[[0-9]{2}:[0-9]{2}:[0-9]{2}\\] \\[[0-9]{2}:[0-9]{2}:[0-9]{2}\\] \\[not run\\]\$" stamps.out "generic/026:generic/004"
shape "-T: the reason follows, after a tab" A-plain-pass-notrun $'^\t@T@ -- .+$' stamps.out "generic/026:generic/004"

#
# 7. -L 1 (rerun on failure), -b (brief), with the selftest directory
#
run_check loop.out -R xunit -b -L 1 selftest/001 selftest/002
check "-L: the failing test's mismatch is printed twice" test "$(grep -c '^selftest/002 .*- output mismatch' "$T/loop.out")" -eq 2
shape "-L: aggregate line" J-loop '^@T@ aggregate results across [0-9]+ runs: fail=[0-9]+ \(100\.0%\)$' loop.out "generic/002:selftest/002"
check "-L: across 2 runs" grep -qx 'selftest/002 aggregate results across 2 runs: fail=2 (100.0%)' "$T/loop.out"
check "-L: rerun copies of .out.bad" test -f "$R/selftest/002.out.bad.rerun0" -a -f "$R/selftest/002.out.bad.rerun1"
check "-L: result.xml has a testcase per run" test "$(grep -c 'name="selftest/002"' "$R/result.xml")" -eq 2
check "-b: no Ran: line" bash -c "! grep -q '^Ran:' '$T/loop.out'"
check "-b: the failures are still listed" grep -qx 'Failures: selftest/002' "$T/loop.out"
check "-b: Failed 1 of 2 tests" grep -qx 'Failed 1 of 2 tests' "$T/loop.out"
xunit_valid "$R/result.xml" "-L"

#
# 8. a config with sections, -s
#
cat >"$M/sections.config" <<EOF
# mini-fstests sections
[ext4_4k]
FSTYP=ext4
TEST_DEV=$TD
TEST_DIR=$T/mnt/test
SCRATCH_DEV=$SD
SCRATCH_MNT=$T/mnt/scratch
MKFS_OPTIONS="-b 4096"

[noscratch]
SCRATCH_DEV=""

[not_selected]
MKFS_OPTIONS='-b 1024'
EOF
HOST_OPTIONS=sections.config run_check sect.out -R xunit -s ext4_4k -s noscratch generic/001 generic/002
check "sections: exit 0" test "$rc" -eq 0
check "sections: SECTION line for ext4_4k" grep -qx 'SECTION       -- ext4_4k' "$T/sect.out"
check "sections: the section's MKFS_OPTIONS" grep -qx "MKFS_OPTIONS  -- -F -b 4096 $SD" "$T/sect.out"
check "sections: SECTION line for noscratch" grep -qx 'SECTION       -- noscratch' "$T/sect.out"
check "sections: the unselected section does not run" bash -c "! grep -q not_selected '$T/sect.out'"
check "sections: without SCRATCH_DEV, generic/002 is not run" \
	grep -qE '^generic/002 .*\[not run\] this test requires a valid \$SCRATCH_DEV$' "$T/sect.out"
check "sections: no MKFS_OPTIONS header without SCRATCH_DEV" \
	line_after "$T/sect.out" '^SECTION       -- noscratch$' '^FSTYP         -- ext4$'
check "sections: the closing summary per section" test "$(grep -c '^=========================$' "$T/sect.out")" -eq 2
check "sections: per-section result.xml" test -f "$R/ext4_4k/result.xml" -a -f "$R/noscratch/result.xml"
check "sections: per-section check.log" grep -qx 'Not run: generic/002' "$R/noscratch/check.log"
check "sections: results per section" test -f "$R/noscratch/generic/002.notrun"
check "sections: testcase classname is the section" grep -q 'classname="xfstests.noscratch"' "$R/noscratch/result.xml"
xunit_valid "$R/noscratch/result.xml" "sections"

#
# 9. SIGINT to check's process group in the middle of a test (like Ctrl-C):
#    stdout stops at the test's name; check.log says Interrupted!
#
set -m
# (a job started in the background of a script without job control has
# SIGINT ignored, and a shell cannot trap what it was started ignoring)
(cd "$M" && exec env --default-signal=INT ./check -R xunit generic/001 generic/012) >"$T/int.out" 2>&1 &
pid=$!
set +m
# the signal comes once generic/012 is writing its file, which it does for
# a second or two more: no sleep that a busy machine could outlast
for _ in $(seq 300); do
	compgen -G "$T/mnt/test/mini-012.*" >/dev/null && break
	sleep 0.05
done
kill -INT -- -"$pid" 2>/dev/null
wait "$pid"
rc=$?
check "interrupted: check exits 0, as fstests' does" test "$rc" -eq 0
# the name, its padding and the previous time, and no newline
ends_in_test()
{
	[ "$(tail -c 1 "$1" | od -An -tx1 | tr -d ' ')" != 0a ] &&
		[[ $(tail -n 1 "$1") =~ ^"$(pad "$2")"$LAST$ ]]
}
check "interrupted: stdout ends with the test's padded name, no newline" ends_in_test "$T/int.out" generic/012
if [ -f "$FIX/H2-interrupted-mid-test/stdout.txt" ]; then
	check "interrupted: the real H2 fixture ends the same way" \
		ends_in_test "$FIX/H2-interrupted-mid-test/stdout.txt" generic/029
else
	skip "interrupted: the real H2 fixture ends the same way" "no fixtures at $FIX"
fi
check "interrupted: check.log has Interrupted!" grep -qx 'Interrupted!' "$R/check.log"
check "interrupted: check.log counts the test in progress as run" grep -qx 'Ran: generic/001 generic/012' "$R/check.log"
check "interrupted: check.time is intact" bash -c "! grep -qv '^[a-z0-9]*/[0-9]* [0-9]*$' '$R/check.time'"
check "no check temporary file is left at the end" test -z "$(ls -A "$TMPDIR")"

#
# 10. TEST_DIR is mounted with TEST_FS_MOUNT_OPTS, as fstests' _test_mount
#     does (MOUNT_OPTIONS is for SCRATCH, and for the mount after a file
#     system check, which fstests also runs on TEST_DEV before the first
#     test); an xfs TEST_LOGDEV is given to mount, and to the check, with
#     USE_EXTERNAL=yes. A test of this run's own cycles the TEST_DIR mount,
#     as many fstests tests do, and records how it is mounted (check
#     unmounts it at the end).
#
# (the interrupted test above may keep TEST_DIR busy for a moment)
for _ in $(seq 50); do
	mountpoint -q "$T/mnt/test" || break
	umount "$T/mnt/test" 2>/dev/null || sleep 0.2
done
printf '%s\n' '#! /bin/bash' '# How TEST_DIR is mounted, for tests/e2e/mini-fstests.sh.' \
	'. ./common/preamble' '_begin_fstest auto' '_require_test' '_test_cycle_mount' \
	'findmnt -no OPTIONS "$TEST_DIR" >"$MINI_TEST_OPTS"' 'echo recorded' 'status=0' 'exit' \
	>"$M/tests/generic/099"
printf '%s\n' 'QA output created by 099' 'recorded' >"$M/tests/generic/099.out"
chmod +x "$M/tests/generic/099"
echo "099 auto" >>"$M/tests/generic/group.list"
export MINI_TEST_OPTS=$T/test-opts
mkfs.ext4 -q -F "$TD" >/dev/null 2>&1
cat >"$M/local.config" <<EOF
export FSTYP=ext4
export TEST_DEV=$TD
export TEST_DIR=$T/mnt/test
export SCRATCH_DEV=$SD
export SCRATCH_MNT=$T/mnt/scratch
export MOUNT_OPTIONS='-o nodelalloc'
export TEST_FS_MOUNT_OPTS='-o nodelalloc,noatime'
EOF
run_check testopts.out generic/099
check "TEST_FS_MOUNT_OPTS: the test passes" test "$rc" -eq 0
check "TEST_FS_MOUNT_OPTS: TEST_DIR is mounted with them" \
	bash -c "grep -q nodelalloc '$T/test-opts' && grep -q noatime '$T/test-opts' ||
		{ echo \"mounted with: \$(cat '$T/test-opts')\"; false; }"
rm -f "$T/test-opts"
LD=""
release_log() { [ -n "$LD" ] && losetup -d "$LD"; return 0; }
at_exit release_log
if command -v mkfs.xfs >/dev/null && truncate -s 64M "$T/log.img" &&
	LD=$(losetup -f --show "$T/log.img") &&
	# (mkfs.xfs makes file systems under 300MB only for fstests, which it
	# recognises by these variables)
	TEST_DIR=$T/mnt/test TEST_DEV=$SD QA_CHECK_FS=1 \
		mkfs.xfs -q -f -l logdev="$LD",size=16m "$SD" >/dev/null 2>&1; then
	cat >"$M/local.config" <<EOF
export FSTYP=xfs
export TEST_DEV=$SD
export TEST_DIR=$T/mnt/test
export USE_EXTERNAL=yes
export TEST_LOGDEV=$LD
EOF
	run_check logdev.out generic/099
	check "TEST_LOGDEV: the test passes on xfs with an external log, checked after it" \
		test "$rc" -eq 0
	check "TEST_LOGDEV: TEST_DIR is mounted with logdev=" grep -q "logdev=$LD" "$T/test-opts"
else
	skip "TEST_LOGDEV: xfs with an external log on loop devices" "mkfs.xfs is missing or failed"
fi

done_testing
