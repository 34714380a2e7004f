#!/usr/bin/env bash
# The libvirt backend on a "remote" host: qemu+ssh://root@127.0.0.1:PORT/system
# through a private sshd on loopback (sshd-lib.sh) to a private libvirtd
# (libvirtd-lib.sh), as a remote libvirt host is reached. The kernel, the
# initramfs and the appliance are uploaded into the host's storage pool
# (once: a second run uploads nothing), the guest runs from there, an
# unknown host key fails with what to do (ssh never asks on fswb's
# terminal), and nothing of the session is left in the pool.
. "$(dirname "$0")/../lib.sh"

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests
need_guest "the libvirt backend on a remote host"
SSHD_WHAT="the libvirt backend on a remote host"
. "$(dirname "$0")/sshd-lib.sh"
. "$(dirname "$0")/libvirtd-lib.sh"
command -v virt-ssh-helper >/dev/null || {
	skip "$SSHD_WHAT" "virt-ssh-helper is not installed (make deps)"
	done_testing
	exit 0
}
# ssh (which libvirt runs) reads root's ~/.ssh from the password file, not
# $HOME: fswb runs in a mount namespace whose /root is a tmpfs holding only
# the known_hosts file $KH, so the host's own is neither read nor changed.
export KH=$T/known_hosts
: >"$KH"
fswb_ns() {
	unshare -m sh -c 'mount -n --make-rprivate / &&
		mount -n -t tmpfs -o mode=0700 fswb-e2e-root /root &&
		mkdir -m 0700 /root/.ssh && cp "$KH" /root/.ssh/known_hosts &&
		exec "$@"' sh "$FSWB" "$@"
}
runs_dir=$FSWB_HOME/data/runs
last_run() { ls -td "$runs_dir"/*/ 2>/dev/null | head -1; }
why() { tail -n 3 "$T/err" 2>/dev/null | tr '\n' ' '; }

if ! libvirtd_start; then
	fail "the private libvirtd starts" "$(tail -5 "$LVD/libvirtd.log" 2>/dev/null)"
	done_testing
	exit 1
fi
if ! sshd_start a 2>"$T/sshd.err"; then
	fail "a private sshd" "$(cat "$T/sshd.err")"
	done_testing
	exit 1
fi
# the "remote host" sees the daemon where libvirt's ssh helper looks for it
sshd_exec a sh -c "mkdir -p /run/libvirt && mount -n --bind '$LVD/sock' /run/libvirt"
URI="qemu+ssh://root@127.0.0.1:$SSHD_PORT/system?keyfile=$SSHD_KEY"

# 1. An unknown host key: refused by ssh, never asked on the terminal.
fswb_ns run --backend libvirt -o "uri=$URI" -o accel=tcg -c ext4/4k \
	--fstests-src "$MINI" generic/001 </dev/null >"$T/out" 2>"$T/err"
rc=$?
check "unknown host key: exit 2 (rc=$rc)" test "$rc" -eq 2
check "unknown host key: says to check and accept it" \
	grep -q "ssh does not know the host key" "$T/out" "$T/err"

# 2. A run on the host: the files uploaded to its pool, the guest run there.
printf '%s\n' "$SSHD_KNOWN_HOST" >"$KH"
out=$(fswb_ns doctor --backend libvirt -o "uri=$URI" 2>&1)
check "doctor: the remote daemon answers" grep -qE "answers: libvirt [0-9.]+" <<<"$out"
out=$(fswb_ns run --backend libvirt -o "uri=$URI" -o accel=tcg -c ext4/4k \
	--fstests-src "$MINI" generic/001 generic/002 2>"$T/err")
rc=$?
printf '%s\n' "$out" >"$T/out2"
check "remote: exit 0 (rc=$rc; $(why))" test "$rc" -eq 0
check "remote: generic/001 passes" grep -qE '^generic/001 +pass ' "$T/out2"
check "remote: generic/002 passes" grep -qE '^generic/002 +pass ' "$T/out2"
run=$(last_run)
check "remote: the appliance was uploaded to the pool" \
	grep -qE "uploading the appliance \([0-9]+ MiB of data in [0-9]+ MiB\) to libvirt's pool fswb" "$run/console.log"
check "remote: the guest booted from there" grep -q 'Linux version' "$run/console.log"
check "remote: the pool keeps the kernel, initramfs and appliance, once each" \
	test "$(lvsh vol-list fswb | grep -c '\.done')" -eq 3
vol=$(lvsh vol-list fswb | awk '$1 ~ /^fswb-appliance-[0-9a-f]+$/ { print $1 }')
info=$(lvsh vol-info --bytes --pool fswb "$vol" 2>&1)
check "remote: the appliance's holes were not sent (allocation below capacity)" \
	test "$(awk '/^Allocation:/ { print $2 }' <<<"$info")" -lt "$(awk '/^Capacity:/ { print $2 }' <<<"$info")"
check "remote: no session volume is left" sh -c "! lvsh vol-list fswb | grep -q 'fswb-ext4'"
check "remote: no domain is left" test -z "$(lvsh list --all --name | tr -d '[:space:]')"

# 3. Again: nothing is uploaded.
out=$(fswb_ns run --backend libvirt -o "uri=$URI" -o accel=tcg -c ext4/4k \
	--fstests-src "$MINI" generic/001 2>"$T/err")
rc=$?
check "again: exit 0 (rc=$rc; $(why))" test "$rc" -eq 0
run=$(last_run)
check "again: nothing was uploaded" sh -c "! grep -q 'uploading' '$run/console.log'"
check "no QEMU is left" test "$(pgrep -fc 'qemu-system-x86_64.*fswb-')" -eq 0
done_testing
