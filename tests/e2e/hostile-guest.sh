#!/usr/bin/env bash
# A hostile test in a real guest: a copy of mini-fstests whose tests plant
# in their own results directory a symlink to a host file, a setuid copy of
# sh, a device node, a FIFO, a hard link, an oversized .full, and escape
# sequences in their output and not-run reason. The run goes on; each case
# is recorded as a test result; nothing of the host is read, nothing but
# regular files and directories lands in the run directory, and no escape
# reaches the terminal. Boots a guest: run it under the TCG lock.
. "$(dirname "$0")/../lib.sh"

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
need_guest "a hostile test in a guest"

ESC=$'\033'
SECRET=$T/host-secret
echo "HOST-SECRET-$$" >"$SECRET"
M=$T/mini
cp -a "$SRCDIR/tests/fixtures/mini-fstests" "$M"
rm -rf "$M/results" "$M/local.config"

# generic/013 plants things next to its results; its output holds escapes
cat >"$M/tests/generic/013" <<EOF
#! /bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hostile test: things planted in the results directory.
. ./common/preamble
_begin_fstest hostile

ln -s "$SECRET" "\$RESULT_DIR/secret"
ln -s "$SECRET" "\$seqres.out.bad.link"
mkdir -p "\$RESULT_DIR/generic"
ln -s "$SECRET" "\$RESULT_DIR/generic/012.full"
ln -s / "\$RESULT_DIR/root"
cp /bin/sh "\$RESULT_DIR/sh-suid" && chmod 4755 "\$RESULT_DIR/sh-suid"
ln "\$RESULT_DIR/sh-suid" "\$RESULT_DIR/hardlink"
mknod "\$RESULT_DIR/mem" c 1 1
mkfifo "\$RESULT_DIR/fifo"
head -c 3M /dev/zero >"\$seqres.full"
printf 'escape \\033]0;pwned\\007 \\033[2J here\\n'
status=0
exit
EOF
printf 'QA output created by 013\n' >"$M/tests/generic/013.out"
# generic/014 is not run, for a reason full of escapes
cat >"$M/tests/generic/014" <<'EOF'
#! /bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hostile test: escapes in its not-run reason.
. ./common/preamble
_begin_fstest hostile
_notrun "$(printf 'needs \033]0;pwned\007\033[2J\033]52;c;aGk=\007 nothing')"
EOF
printf 'QA output created by 014\n' >"$M/tests/generic/014.out"
chmod 0755 "$M/tests/generic/013" "$M/tests/generic/014"
printf '013 hostile\n014 hostile\n' >>"$M/tests/generic/group.list"

"$FSWB" run -c ext4/4k --fstests-src "$M" --max-results 1M \
	generic/001 generic/013 generic/014 >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out" "$T/err" >"$T/all"
run=$(ls -d "$FSWB_HOME"/data/runs/*/ | sort | tail -1)
check "the run ends with the hostile test as a failure (rc=$rc; $(tail -3 "$T/err" | tr '\n' ' '))" test "$rc" -eq 1
check "generic/001 passes" grep -qE '^generic/001 +pass' "$T/out"
check "generic/013 is recorded, as a failure" grep -qE '^generic/013 +fail' "$T/out"
check "generic/014 is recorded as not run" grep -qE '^generic/014 +notrun' "$T/out"
check "no escape reaches the terminal" bash -c '! grep -q "$1" "$2"' _ "$ESC" "$T/all"
check "the escapes are shown as text" grep -qF '^[]0;pwned^G' "$T/out"
check "the members left out are named in a warning" grep -q 'members of the results archive left out' "$T/err"
check "the symlink is named" grep -q "secret' (a symlink)" "$T/err"
check "the device is named" grep -q "mem' (a character device)" "$T/err"
check "the oversized .full is named" grep -q "generic/013.full' (it would take the unpacked results past 1 MiB" "$T/err"
check "only regular files and directories in the run directory" \
	bash -c '[ -z "$(find "$1" ! -type f ! -type d)" ]' _ "$run"
check "no setuid file in the run directory" bash -c '[ -z "$(find "$1" -perm /6000)" ]' _ "$run"
check "no file mode but 0644 and 0755" \
	bash -c '[ -z "$(find "$1" -path "$1guest-*" -prune -o -type f ! -perm 0644 ! -perm 0755 -print)" ]' _ "$run"
check "the host file is nowhere in the run directory" bash -c '! grep -rq "HOST-SECRET" "$1"' _ "$run"
check "no results archive is left behind" bash -c '! ls "$1"/results-*.tar.gz 2>/dev/null' _ "$run"
check "run.json says finished" grep -q '"finished": true' "$run/run.json"
check "the kept .out.bad is the guest's" test -f "$run/results/ext4-4k/generic/013.out.bad"
check "junit.xml is well-formed" xmllint --noout "$run/junit.xml"
check "no QEMU is left running" test "$(pgrep -f "qemu-system-x86_64.*$FSWB_HOME" | wc -l)" -eq 0
# what fswb said, for a failure above
sed 's/^/# /' "$T/err"

done_testing
