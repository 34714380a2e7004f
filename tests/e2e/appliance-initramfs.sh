#!/usr/bin/env bash
# The initramfs for the installed (modular) Debian kernel, booted for real
# under QEMU (TCG): a tiny root filesystem whose init loads fs modules with
# modprobe and powers off; the default init, root=LABEL=, a missing init;
# and the full test appliance (when it is in the test cache) reaching
# fswb-init.
. "$(dirname "$0")/../lib.sh"

# a missing command is a failure of this fswb, not a reason to skip
if ! "$FSWB" appliance --help >/dev/null 2>&1; then
	fail "fswb appliance --help" "this fswb has no working 'appliance' command"
	done_testing
	exit
fi
qemu=$(command -v qemu-system-x86_64)
version=
for k in /boot/vmlinuz-*; do
	v=${k#/boot/vmlinuz-}
	[ -f "/lib/modules/$v/modules.dep" ] && version=$v
done
if [ -z "$qemu" ] || [ -z "$version" ] || [ ! -x /bin/busybox ]; then
	skip "initramfs boot" "needs qemu-system-x86_64, an installed modular kernel and busybox-static"
	done_testing
	exit
fi
kernel=/boot/vmlinuz-$version
unset FSWB_CACHE_DIR

# ---- building it ----
t0=$(date +%s%N)
initrd=$("$FSWB" appliance initramfs --kernel "$version" 2>"$T/ir.err")
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "initramfs for $version builds" test "$rc" -eq 0
check "it is a gzip file in the cache" bash -c "gzip -t '$initrd'"
echo "# initramfs: ${ms} ms to build, $(du -h "$initrd" | cut -f1)"
check "it holds xfs.ko" bash -c "gzip -dc '$initrd' | cpio -t 2>/dev/null | grep -q 'kernel/fs/xfs/xfs.ko'"
check "it holds /init" bash -c "gzip -dc '$initrd' | cpio -t 2>/dev/null | grep -qx init"
t0=$(date +%s%N)
again=$("$FSWB" appliance initramfs --kernel "$version" 2>/dev/null)
ms=$((($(date +%s%N) - t0) / 1000000))
check "the second time it is the same file" test "$again" = "$initrd"
check "the second time is quick (${ms} ms)" test "$ms" -lt 1000
err=$("$FSWB" appliance initramfs --kernel 0.0.0-none 2>&1)
check "an unknown kernel is named" grep -q "0.0.0-none" <<<"$err"

# ---- a tiny root filesystem ----
root=$T/root
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,lib/modules,usr/local/sbin}
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cat >"$root/sbin/testinit" <<'EOF'
#!/bin/sh
/bin/busybox --install -s /bin
echo "FSWB-TEST-INIT pid=$$ kernel=$(uname -r)"
for m in xfs btrfs overlay dm_mod loop; do
	if modprobe "$m"; then
		echo "FSWB-TEST-MODPROBE-OK $m"
	fi
done
grep -qw xfs /proc/filesystems && echo FSWB-TEST-XFS-REGISTERED
mount | grep -q "lib/modules/$(uname -r) type tmpfs" && echo FSWB-TEST-MODULES-TMPFS
echo o >/proc/sysrq-trigger
sleep 10
EOF
cat >"$root/usr/local/sbin/fswb-init" <<'EOF'
#!/bin/sh
echo "FSWB-TEST-DEFAULT-INIT pid=$$"
echo o >/proc/sysrq-trigger
sleep 10
EOF
chmod 755 "$root/sbin/testinit" "$root/usr/local/sbin/fswb-init"
mkfs.ext4 -q -L fswb-test-root -d "$root" "$T/root.img" 64M >/dev/null

boot() { # boot IMAGE FORMAT LOG APPEND...
	local img=$1 fmt=$2 log=$3
	shift 3
	timeout 180 "$qemu" -accel tcg -m 768 -smp 1 -nodefaults -no-reboot -display none \
		-serial "file:$log" -kernel "$kernel" -initrd "$initrd" \
		-drive "file=$img,if=virtio,format=$fmt" \
		-append "console=ttyS0 panic=-1 $*" </dev/null >"$log.qemu" 2>&1
}

start=$SECONDS
boot "$T/root.img" raw "$T/boot1.log" root=/dev/vda rw init=/sbin/testinit
rc=$?
echo "# boot with modprobe: $((SECONDS - start))s"
check "the guest powered itself off" test "$rc" -eq 0
check "the initramfs loaded the boot modules" grep -qE "fswb-initramfs: loaded [0-9]+ modules" "$T/boot1.log"
check "init= was honoured, as PID 1" grep -q "FSWB-TEST-INIT pid=1 kernel=$version" "$T/boot1.log"
for m in xfs btrfs overlay dm_mod loop; do
	check "modprobe $m worked in the guest" grep -q "FSWB-TEST-MODPROBE-OK $m" "$T/boot1.log"
done
check "xfs is registered" grep -q FSWB-TEST-XFS-REGISTERED "$T/boot1.log"
check "the modules are on a tmpfs" grep -q FSWB-TEST-MODULES-TMPFS "$T/boot1.log"
grep -q FSWB-TEST-MODPROBE-OK "$T/boot1.log" || fail "console" "$(tail -30 "$T/boot1.log")"

boot "$T/root.img" raw "$T/boot2.log" root=LABEL=fswb-test-root
check "root=LABEL= and the default init (/usr/local/sbin/fswb-init)" \
	grep -q "FSWB-TEST-DEFAULT-INIT pid=1" "$T/boot2.log"

boot "$T/root.img" raw "$T/boot3.log" root=/dev/vda init=/no/such/init
rc=$?
check "a missing init: the guest still powers off" test "$rc" -eq 0
check "a missing init is named on the console" \
	grep -q "'/no/such/init' is not in the root filesystem" "$T/boot3.log"

# ---- the full appliance, when the test cache has it ----
export FSWB_CACHE_DIR=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}/fswb
j=$("$FSWB" appliance build --dry-run --json --fstests-src "$SRCDIR/tests/fixtures/mini-fstests" 2>/dev/null)
if [ "$(jq -r .cached <<<"$j" 2>/dev/null)" = true ]; then
	app=$(jq -r .image <<<"$j")
	qemu-img create -q -f qcow2 -F raw -b "$app" "$T/overlay.qcow2"
	start=$SECONDS
	boot "$T/overlay.qcow2" qcow2 "$T/boot4.log" root=/dev/vda rw
	echo "# the full appliance to fswb-init and off: $((SECONDS - start))s"
	check "the full appliance reaches fswb-init" grep -q "fswb-init: up after" "$T/boot4.log"
	check "fswb-init could remount / (mount is in the appliance)" \
		bash -c "! grep -q 'cannot remount' '$T/boot4.log'"
	check "the full appliance's image was not written" e2fsck -fn "$app"
else
	skip "the full appliance boots" "it is not in $FSWB_CACHE_DIR yet (appliance-full.sh builds it)"
fi

done_testing
