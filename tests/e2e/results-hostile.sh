#!/usr/bin/env bash
# fswb results import of hostile results directories: symlinks to host
# files, a FIFO named result.xml, test names that climb out, numbers that are
# not numbers, escape sequences for the terminal. Nothing of the host may be
# read, nothing may hang, no escape may reach the terminal.
. "$(dirname "$0")/../lib.sh"

ESC=$'\033'
secret=$T/host/secret
mkdir -p "$T/host/generic"
echo "HOST-SECRET-LINE" >"$secret"
echo "HOST-SECRET-FULL" >"$T/host/generic/002.full"

# A results directory whose test files are symlinks to host files, whose
# group directory is a symlink, and whose result.xml is a FIFO.
H=$T/hostile
mkdir -p "$H"
cat >"$H/check.log" <<'EOF'
Kernel version: 6.1.0
Thu Dec  3 07:54:32 UTC 2026
Ran: generic/001 generic/002 generic/003
Not run: generic/003
Failures: generic/001 generic/002
Failed 2 of 3 tests
EOF
mkdir -p "$H/generic-real"
ln -s "$T/host/generic" "$H/xfs"
mkdir -p "$H/generic"
ln -s "$secret" "$H/generic/001.out.bad"
ln -s "$secret" "$H/generic/001.full"
ln -s "$T/host/generic/002.full" "$H/generic/002.full"
printf 'not run \033]0;pwned\007 \033[2J reason\r\n' >"$H/generic/003.notrun"
mkfifo "$H/result.xml"
mkfifo "$H/check.time"

out=$(timeout 30 "$FSWB" results import "$H" 2>&1)
rc=$?
check "a FIFO named result.xml does not hang the import (exit $rc)" test "$rc" -ne 124
check "the import still reads check.log" grep -qE ': 3 tests, 2 failures, 1 skipped' <<<"$out"
check "no host file is read through a symlink" bash -c '! grep -q HOST-SECRET <<<"$1"' _ "$out"
check "no symlinked artifact is listed" bash -c '! grep -q "001.out.bad\|001.full" <<<"$1"' _ "$out"
check "the not-run reason comes through" grep -q 'reason' <<<"$out"
check "no escape reaches the terminal" bash -c '! grep -q "$1" <<<"$2"' _ "$ESC" "$out"
check "the escapes are shown as text" grep -qF '^[]0;pwned^G' <<<"$out"
json=$("$FSWB" results import "$H" --json)
check "--json has no host file either" bash -c '! grep -q HOST-SECRET <<<"$1"' _ "$json"
check "--json has no raw escape" bash -c '! grep -q "$1" <<<"$2"' _ "$ESC" "$json"

# xunit from a hostile machine: a test name that climbs out, a time that
# is not a number.
X=$T/xunit
mkdir -p "$X"
cat >"$X/evil-name.xml" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="xfstests" failures="1" skipped="0" tests="1" time="1">
	<testcase classname="xfstests.global" name="../../../../etc/passwd" time="1">
		<failure message="boom"/>
	</testcase>
</testsuite>
EOF
err=$("$FSWB" results import "$X/evil-name.xml" 2>&1)
rc=$?
check "a test name that climbs out is refused (exit $rc)" test "$rc" -eq 2
check "the refusal names the file and the test" grep -q "evil-name.xml': testcase 1: name '../../../../etc/passwd' is not a test name" <<<"$err"
sed 's/name="..\/..\/..\/..\/etc\/passwd" time="1"/name="generic\/001" time="inf"/' "$X/evil-name.xml" >"$X/inf.xml"
err=$("$FSWB" results import "$X/inf.xml" 2>&1)
check "a time of inf is refused with the file and field" grep -q "inf.xml': testcase 1 (generic/001): time 'inf' is not a number of seconds" <<<"$err"
sed 's/time="inf"/time="1e300"/' "$X/inf.xml" >"$X/huge.xml"
err=$("$FSWB" results import "$X/huge.xml" 2>&1)
check "an absurd time is refused" grep -q "time '1e300'" <<<"$err"
# An ESC is not a character XML allows: the document is refused where it is.
sed "s/generic\/001\" time=\"inf\"/generic\/001${ESC}]0;x$'\a'\" time=\"1\"/" "$X/inf.xml" >"$X/esc.xml"
err=$("$FSWB" results import "$X/esc.xml" 2>&1)
rc=$?
check "a test name with an escape is refused (exit $rc)" test "$rc" -eq 2
check "the refusal names the file and the line, and the message is clean" \
	bash -c 'grep -q "esc.xml.: line 3: not well-formed XML" <<<"$2" && ! grep -q "$1" <<<"$2"' _ "$ESC" "$err"
# A C1 control (CSI) is one XML allows: the name is refused, the message clean.
C1=$'\xc2\x9b'
sed "s/generic\/001\" time=\"inf\"/generic\/001${C1}2J\" time=\"1\"/" "$X/inf.xml" >"$X/csi.xml"
err=$("$FSWB" results import "$X/csi.xml" 2>&1)
check "a test name with a CSI is refused, and the message is clean" \
	bash -c 'grep -q "csi.xml.: testcase 1: name .* is not a test name" <<<"$2" && ! grep -q "$1" <<<"$2"' _ "$C1" "$err"

# XML attacks: entities (billion laughs, an external entity naming a host
# file), nesting without end, an attribute too large. Each is refused with the
# file and the line, and nothing of the host is read.
cat >"$X/laughs.xml" <<'XML'
<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<testsuite name="xfstests" time="1">
	<testcase classname="xfstests.global" name="generic/001" time="1">
		<failure message="&lol9;"/>
	</testcase>
</testsuite>
XML
err=$(timeout 30 "$FSWB" results import "$X/laughs.xml" 2>&1)
rc=$?
check "billion laughs is refused at once (exit $rc)" test "$rc" -eq 2
check "billion laughs: the refusal names the file and the DOCTYPE" \
	grep -q "laughs.xml': line 2: a DOCTYPE is not allowed" <<<"$err"
cat >"$X/xxe.xml" <<XML
<?xml version="1.0"?>
<!DOCTYPE testsuite [ <!ENTITY xxe SYSTEM "file://$secret"> ]>
<testsuite name="xfstests" time="1">
	<testcase classname="xfstests.global" name="generic/001" time="1">
		<failure message="x"/>
		<system-err>&xxe;</system-err>
	</testcase>
</testsuite>
XML
err=$("$FSWB" results import "$X/xxe.xml" 2>&1)
check "an external entity is refused with the file and the line" \
	grep -q "xxe.xml': line 2: a DOCTYPE is not allowed" <<<"$err"
json=$("$FSWB" results import "$X/xxe.xml" --json 2>&1)
check "an external entity reads nothing of the host" \
	bash -c '! grep -q HOST-SECRET <<<"$1"' _ "$err$json"
{
	echo '<?xml version="1.0"?>'
	echo '<testsuite name="xfstests" time="1">'
	for _ in $(seq 100000); do printf '<a>'; done
	echo
} >"$X/deep.xml"
err=$(timeout 30 "$FSWB" results import "$X/deep.xml" 2>&1)
rc=$?
check "deep nesting is refused (exit $rc)" test "$rc" -eq 2
check "deep nesting: the refusal names the file and the line" \
	grep -q "deep.xml': line 3: elements are nested more than 64 deep" <<<"$err"
{
	echo '<?xml version="1.0"?>'
	echo '<testsuite name="xfstests" time="1">'
	printf '<testcase classname="xfstests.global" name="generic/001" time="1"><failure message="'
	head -c $((12 << 20)) /dev/zero | tr '\0' A
	echo '"/></testcase></testsuite>'
} >"$X/attr.xml"
err=$(timeout 30 "$FSWB" results import "$X/attr.xml" 2>&1)
rc=$?
check "a 12 MB attribute is refused (exit $rc)" test "$rc" -eq 2
check "a huge attribute: the refusal names the file and the line" \
	grep -q "attr.xml': line 3: refused: an attribute, tag, name or comment in it is too large" <<<"$err"

# The import directory given as a FIFO or through a FIFO file path.
mkfifo "$T/fifo.xml"
err=$(timeout 30 "$FSWB" results import "$T/fifo.xml" 2>&1)
rc=$?
check "a FIFO given as the file does not hang (exit $rc)" test "$rc" -eq 2
check "a FIFO given as the file is named" grep -q "'$T/fifo.xml' is not a regular file" <<<"$err"

# A run.json with a number that is not one.
R=$FSWB_HOME/data/runs/20261203-120000
mkdir -p "$R"
echo '{}' >"$R/plan.json"
"$FSWB" results import "$SRCDIR/tests/fixtures/fstests-runs/B-mismatch/results" --json |
	sed 's/"seconds": [0-9.]*/"seconds": 1e300/' >"$R/run.json"
err=$("$FSWB" results show last 2>&1)
check "an absurd number in run.json is refused with the file and field" \
	grep -qE "run.json.*seconds.*must be a number of seconds" <<<"$err"

# A tarball of results (xfstests-bld's, compressed with xz and with gzip) with
# a symlink to a host file and a FIFO: both left out, named, nothing followed.
X=$T/xbld
mkdir -p "$X/ext4/results-4k"
cp "$SRCDIR/tests/fixtures/fstests-runs/B-mismatch/results/check.log" "$X/ext4/results-4k/"
echo secret >"$T/host-secret"
ln -s "$T/host-secret" "$X/ext4/results-4k/generic-001.full"
mkfifo "$X/ext4/results-4k/pipe"
for z in xz gz; do
	tar -C "$X" -caf "$T/xbld.tar.$z" .
	err=$("$FSWB" results import "$T/xbld.tar.$z" 2>&1 >/dev/null)
	check "tar.$z: the symlink is left out and named" grep -q "generic-001.full' (a symlink)" <<<"$err"
	check "tar.$z: the FIFO is left out" grep -q "pipe'" <<<"$err"
	check "tar.$z: the host file was not read" bash -c "! grep -rq secret '$FSWB_HOME'"
done

done_testing
