#!/usr/bin/env bash
# fswb run -c nfs/loopback end to end: a real QEMU guest (TCG here) booting
# the installed kernel and an appliance built with mini-fstests serves its
# own ext4 disks over NFS and runs check with FSTYP=nfs against them, as
# xfstests-bld's nfs/loopback does: the exports, the server, check's view
# of them (local.config, the mounts) and tests on TEST_DIR and SCRATCH_MNT.
. "$(dirname "$0")/../lib.sh"

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests

need_guest "fswb run -c nfs/loopback in a guest"

qemus() { pgrep -f "qemu-system-x86_64.*$FSWB_HOME" | wc -l; }
runs_dir=$FSWB_HOME/data/runs
last_run() { ls -d "$runs_dir"/*/ 2>/dev/null | sort | tail -1; }
why() { tail -n 3 "$T/err" 2>/dev/null | tr '\n' ' '; }

# generic/001 (TEST_DIR, with a remount), 002 (SCRATCH: "mkfs", mount,
# remount), 003 (directory operations on TEST_DIR), 004 (dm-log-writes: no
# LOGWRITES_DEV over NFS, so not run)
"$FSWB" run -c nfs --fstests-src "$MINI" generic/001 generic/002 generic/003 generic/004 \
	>"$T/out" 2>"$T/err"
rc=$?
run=$(last_run)
lc=$run/results/nfs-loopback/local.config
check "the run passes (rc=$rc; $(why))" test "$rc" -eq 0
check "generic/001 passes on TEST_DIR over NFS" grep -qE '^generic/001 +pass ' "$T/out"
check "generic/002 passes on SCRATCH over NFS" grep -qE '^generic/002 +pass ' "$T/out"
check "generic/003 passes" grep -qE '^generic/003 +pass ' "$T/out"
check "generic/004 is not run: no log-writes device under NFS" \
	grep -qE '^generic/004 +notrun .*LOGWRITES_DEV' "$T/out"
check "the summary names the configuration" \
	grep -qE '^nfs/loopback: 4 tests, 0 failures, 1 skipped, [0-9]+ seconds$' "$T/out"
check "local.config is FSTYP=nfs" grep -q "^export FSTYP=nfs$" "$lc"
check "TEST_DEV is the export of TEST" grep -q "^export TEST_DEV=127.0.0.1:/srv/fswb/test$" "$lc"
check "SCRATCH_DEV is the export of SCRATCH" \
	grep -q "^export SCRATCH_DEV=127.0.0.1:/srv/fswb/scratch$" "$lc"
check "NFS_MOUNT_OPTIONS asks for NFS 4.2" \
	grep -q "^export NFS_MOUNT_OPTIONS='-o rw,relatime,nfsvers=4.2'$" "$lc"
check "no LOGWRITES_DEV, no MKFS_OPTIONS for check" \
	sh -c "! grep -qE '^export (LOGWRITES_DEV|MKFS_OPTIONS)=' '$lc'"
check "the exported disk's mkfs is kept" \
	grep -q "^# TEST_DEV is exported over nfs by the guest; its disk was made with: mkfs.ext4 -F " "$lc"
check "the guest said it exported both" sh -c \
	"grep -rq 'exported /srv/fswb/test to 127.0.0.1' '$run' && grep -rq 'exported /srv/fswb/scratch to 127.0.0.1' '$run'"
check "the kernel started nfsd" grep -q 'NFSD' "$run/kernel.log"
check "junit.xml is well-formed XML" xmllint --noout "$run/junit.xml"
check "no QEMU is left running" test "$(qemus)" -eq 0
check "no lease is left" sh -c "! ls '$FSWB_HOME/data/leases/' 2>/dev/null | grep -q ."
done_testing
