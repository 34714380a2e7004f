#!/usr/bin/env bash
# The full test appliance: the real package list, tests/fixtures/mini-fstests
# as fstests. It is built once per machine into the shared test cache
# ($FSWB_TEST_CACHE/fswb, default /var/tmp/fswb-test-cache/fswb) and reused
# after that; the end-to-end boot tests use the same one:
#	FSWB_CACHE_DIR=$FSWB_TEST_CACHE/fswb fswb appliance build \
#		--fstests-src tests/fixtures/mini-fstests
. "$(dirname "$0")/../lib.sh"

# a missing command is a failure of this fswb, not a reason to skip
if ! "$FSWB" appliance --help >/dev/null 2>&1; then
	fail "fswb appliance --help" "this fswb has no working 'appliance' command"
	done_testing
	exit
fi
export FSWB_CACHE_DIR=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}/fswb
mkdir -p "$FSWB_CACHE_DIR"
mini=$SRCDIR/tests/fixtures/mini-fstests

# say it where a person watching make check sees it, not only in the log
note() {
	echo "# $*"
	{ echo "appliance-full: $*" >/dev/tty; } 2>/dev/null || true
}

if ! j=$("$FSWB" appliance build --dry-run --json --fstests-src "$mini" 2>"$T/dry.err"); then
	skip "the full appliance" "cannot build here: $(cat "$T/dry.err")"
	done_testing
	exit
fi
if [ "$(jq -r .cached <<<"$j")" != true ]; then
	mirror=$(jq -r .mirror <<<"$j")
	release=$(jq -r .release <<<"$j")
	if ! curl -fsI --max-time 15 "$mirror/dists/$release/InRelease" >/dev/null 2>&1; then
		skip "the full appliance" "it is not cached and the mirror $mirror is not reachable"
		done_testing
		exit
	fi
	note "building the full test appliance into $FSWB_CACHE_DIR (a few minutes, once)"
fi

start=$SECONDS
out=$("$FSWB" appliance build --json --fstests-src "$mini" 2>"$T/build.err")
rc=$?
check "the full appliance builds (or is reused)" test "$rc" -eq 0
if [ "$rc" -ne 0 ]; then
	fail "build output" "$(tail -20 "$T/build.err")"
	done_testing
	exit
fi
img=$(jq -r .image <<<"$out")
if [ "$(jq -r .reused <<<"$out")" = true ]; then
	echo "# reused $(jq -r .id <<<"$out") (built in $(jq -r '.build_seconds | floor' <<<"$out")s)"
else
	note "built $(jq -r .id <<<"$out") in $((SECONDS - start))s"
fi
echo "# image $img: $(jq -r .image_size <<<"$out") bytes, $(jq -r .image_used <<<"$out") used"
check "all packages were asked for" test "$(jq -r .packages <<<"$out")" -ge 50

check "the image is a clean ext4 filesystem" e2fsck -fn "$img"
has() { debugfs -R "stat $1" "$img" 2>/dev/null | grep -q '^Inode:'; }
for f in /usr/sbin/mkfs.xfs /usr/sbin/xfs_repair /usr/sbin/xfs_io /usr/sbin/mkfs.ext4 \
	/usr/sbin/debugfs /usr/sbin/mkfs.btrfs /usr/bin/btrfs /usr/sbin/mkfs.f2fs \
	/usr/sbin/mkfs.exfat /usr/bin/fio /usr/bin/dbench /usr/bin/setfattr /usr/bin/setfacl \
	/usr/sbin/quotacheck /usr/sbin/dmsetup /usr/sbin/lvm /usr/bin/mount /usr/sbin/losetup \
	/usr/bin/gawk /usr/bin/bc /usr/bin/killall /usr/bin/uuidgen /usr/bin/xz /usr/bin/python3 \
	/usr/bin/gcc /usr/bin/make /usr/include/xfs/xfs.h /usr/include/liburing.h \
	/usr/sbin/modprobe /usr/bin/keyctl /usr/sbin/setcap /usr/bin/fsverity; do
	check "the appliance has $f" has "$f"
done
check "no manual pages (dpkg left them out)" bash -c "! debugfs -R 'ls /usr/share/man/man1' '$img' 2>/dev/null | grep -q '\.gz'"
passwd=$(debugfs -R "cat /etc/passwd" "$img" 2>/dev/null)
for u in fsgqa fsgqa2 123456-fsgqa; do
	check "user $u exists" grep -q "^$u:" <<<"$passwd"
done
check "fswb-init is installed, mode 0755" \
	grep -q "Mode:  0755" <(debugfs -R "stat /usr/local/sbin/fswb-init" "$img" 2>/dev/null)
check "fswb-agent is installed, mode 0755" \
	grep -q "Mode:  0755" <(debugfs -R "stat /usr/local/sbin/fswb-agent" "$img" 2>/dev/null)
check "mini-fstests is /opt/fstests" \
	cmp <(debugfs -R "cat /opt/fstests/check" "$img" 2>/dev/null) "$mini/check"
check "the hostname is fswb" grep -qx fswb <(debugfs -R "cat /etc/hostname" "$img" 2>/dev/null)

t0=$(date +%s%N)
out=$("$FSWB" appliance build --fstests-src "$mini" 2>/dev/null)
ms=$((($(date +%s%N) - t0) / 1000000))
check "a second build reuses it" grep -q "reused" <<<"$out"
check "in under a second (${ms} ms)" test "$ms" -lt 1000
echo "# reuse: ${ms} ms"

done_testing
