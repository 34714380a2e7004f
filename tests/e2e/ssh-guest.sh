#!/usr/bin/env bash
# fswb's ssh backend end to end against a real Debian machine: a guest built
# here with mmdebstrap (sshd, e2fsprogs, xfsprogs, mini-fstests in
# /root/mini-fstests), booted under QEMU TCG with the host's kernel and two
# spare virtio disks, reached on 127.0.0.1 inside a network namespace of its
# own (nothing listens on the host's network). It checks: an unknown host key
# refused with its fingerprint, then accepted with --accept-new-host-key; a
# whole run; the guest's kernel log in the run directory; a device not
# confirmed refused; the root device refused even when confirmed; a kernel
# panic in the middle of a test (sysrq-c through the OpenSSH client): that test
# crashed, a new session after the reboot, the rest passing, in bounded time;
# and nothing left behind.
#
# Root only (mmdebstrap as root, mke2fs -d, unshare -n). Never KVM: -accel tcg.
# Everything lives under $T; nothing is cached between runs.
. "$(dirname "$0")/../lib.sh"

MINI=$SRCDIR/tests/fixtures/mini-fstests
PORT=2222
STARTED=$SECONDS

bail() {
	skip "fswb's ssh backend against a Debian guest" "$1"
	done_testing
	exit 0
}

[ "$(id -u)" -eq 0 ] || bail "needs root (mmdebstrap, mke2fs -d of a root file system, unshare -n)"
for p in mmdebstrap qemu-system-x86_64 unshare nsenter ssh ssh-keygen mke2fs ip timeout jq; do
	command -v "$p" >/dev/null 2>&1 ||
		bail "$p is not installed (scripts/install-deps; ssh and ssh-keygen are in openssh-client)"
done

# The guest's kernel: the host's own, with its initrd (the virtio drivers are
# modules in it) and its modules, linux-image-cloud-amd64's first.
KVER=
for k in $(ls -r /boot/vmlinuz-*-cloud-amd64 2>/dev/null) $(ls -r /boot/vmlinuz-* 2>/dev/null); do
	v=${k#/boot/vmlinuz-}
	if [ -r "$k" ] && [ -r "/boot/initrd.img-$v" ] && [ -d "/lib/modules/$v" ]; then
		KVER=$v
		break
	fi
done
[ -n "$KVER" ] || bail "no kernel with an initrd and modules in /boot (scripts/install-deps installs linux-image-cloud-amd64)"

# The host's release and its Debian mirror, found as fswb's appliance builder
# finds them (src/rootfs/host.c): the first apt source of that suite in
# sources.list, then sources.list.d/*.list and *.sources (deb822), sorted.
RELEASE=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[ -n "$RELEASE" ] || bail "/etc/os-release has no VERSION_CODENAME (not a Debian release host)"

mirror_of() { # mirror_of RELEASE FILE...
	local rel=$1 f
	shift
	for f; do
		[ -r "$f" ] || continue
		case $f in
		*.sources)
			awk -v rel="$rel" '
			function flush(   i, n, u, s, t, okt, oks) {
				if (in_st && enabled) {
					okt = 0; oks = 0
					n = split(types, t, /[ \t]+/)
					for (i = 1; i <= n; i++) if (t[i] == "deb") okt = 1
					n = split(suites, s, /[ \t]+/)
					for (i = 1; i <= n; i++) if (s[i] == rel) oks = 1
					if (okt && oks) {
						n = split(uris, u, /[ \t]+/)
						for (i = 1; i <= n; i++)
							if (u[i] ~ /^(https?:\/\/|ftp:\/\/|file:\/)/) { print u[i]; exit }
					}
				}
				types = uris = suites = ""; enabled = 1; in_st = 0; last = ""
			}
			BEGIN { enabled = 1 }
			/^#/ { next }
			/^[ \t]*$/ { flush(); next }
			/^[ \t]/ { if (last == "uris") uris = uris " " $0; in_st = 1; next }
			{
				in_st = 1
				key = tolower($0); sub(/:.*/, "", key); gsub(/[ \t]/, "", key)
				val = $0; sub(/^[^:]*:[ \t]*/, "", val); sub(/[ \t]+$/, "", val)
				last = key
				if (key == "types") types = val
				else if (key == "uris") uris = val
				else if (key == "suites") suites = val
				else if (key == "enabled") enabled = !(tolower(val) == "no" || tolower(val) == "false" || val == "0")
			}
			END { flush() }' "$f"
			;;
		*)
			awk -v rel="$rel" '
			{ sub(/#.*/, "") }
			$1 == "deb" {
				j = 2
				if ($2 ~ /^\[/) { while (j <= NF && $j !~ /\]$/) j++; j++ }
				if (j + 1 <= NF && $(j + 1) == rel && $j ~ /^(https?:\/\/|ftp:\/\/|file:\/)/) { print $j; exit }
			}' "$f"
			;;
		esac | head -n 1
	done | head -n 1
}
mapfile -t apt_parts < <(printf '%s\n' /etc/apt/sources.list.d/* | grep -E '\.(list|sources)$' | LC_ALL=C sort)
MIRROR=$(mirror_of "$RELEASE" /etc/apt/sources.list "${apt_parts[@]}")
[ -n "$MIRROR" ] || bail "no apt source for '$RELEASE' in /etc/apt/sources.list or sources.list.d"

runs_dir=$FSWB_HOME/data/runs
last_run() { ls -d "$runs_dir"/*/ 2>/dev/null | sort | tail -n 1; }
serial_tail() { tail -n "${1:-15}" "$T/serial.log" 2>/dev/null | tr -d '\r'; }
took() { echo "# $1: $((SECONDS - $2)) s"; }

# ---- 1. the guest's root file system ----------------------------------------
t0=$SECONDS
ROOT=$T/root
ssh-keygen -q -t ed25519 -N '' -C fswb-test-client -f "$T/client_key"
ssh-keygen -q -t ed25519 -N '' -C fswb-test-host -f "$T/host_key"
HOST_FP=$(ssh-keygen -lf "$T/host_key.pub" | awk '{ print $2 }')
# mmdebstrap's own hooks, when it has them: merged /usr from the start (no
# usrmerge, hence no perl) and dpkg without fsync (eatmydata) save time
hooks=()
for h in merged-usr eatmydata; do
	[ -d "/usr/share/mmdebstrap/hooks/$h" ] && hooks+=("--hook-dir=/usr/share/mmdebstrap/hooks/$h")
done
if ! mmdebstrap --variant=minbase "${hooks[@]}" \
	--include=systemd-sysv,openssh-server,e2fsprogs,xfsprogs,util-linux,bash,gawk,tar,gzip,kmod,procps,udev,iproute2 \
	--aptopt='Acquire::Languages "none"' --aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	"$RELEASE" "$ROOT" "deb $MIRROR $RELEASE main" >"$T/mmdebstrap.log" 2>&1; then
	fail "mmdebstrap builds the guest ($RELEASE from $MIRROR)" "$(tail -n 20 "$T/mmdebstrap.log")"
	done_testing
	exit 1
fi
pass "mmdebstrap builds a $RELEASE guest from the host's mirror $MIRROR"
took "mmdebstrap" $t0

# sshd: the test's host key only (its fingerprint is known), root by key only
rm -f "$ROOT"/etc/ssh/ssh_host_*
install -m 600 "$T/host_key" "$ROOT/etc/ssh/ssh_host_ed25519_key"
install -m 644 "$T/host_key.pub" "$ROOT/etc/ssh/ssh_host_ed25519_key.pub"
printf '%s\n' 'HostKey /etc/ssh/ssh_host_ed25519_key' 'PermitRootLogin prohibit-password' \
	'PasswordAuthentication no' 'UseDNS no' >"$ROOT/etc/ssh/sshd_config.d/fswb-test.conf"
install -d -m 700 "$ROOT/root/.ssh"
install -m 600 "$T/client_key.pub" "$ROOT/root/.ssh/authorized_keys"
# eth0 by DHCP from QEMU's user network
printf '%s\n' '[Match]' 'Name=eth0 en*' '' '[Network]' 'DHCP=ipv4' \
	>"$ROOT/etc/systemd/network/10-fswb-test.network"
chroot "$ROOT" systemctl enable -q systemd-networkd >>"$T/mmdebstrap.log" 2>&1
# nothing that would run beside the tests or slow the boot
chroot "$ROOT" systemctl mask -q apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer \
	e2scrub_all.timer fstrim.timer e2scrub_reap.service getty@tty1.service \
	>>"$T/mmdebstrap.log" 2>&1
echo fswb-ssh-guest >"$ROOT/etc/hostname"
echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$ROOT/etc/fstab"
# the kernel's modules and config (ext4/001 reads /boot/config-RELEASE)
mkdir -p "$ROOT/usr/lib/modules" "$ROOT/boot"
cp -a "/lib/modules/$KVER" "$ROOT/usr/lib/modules/"
cp "/boot/config-$KVER" "$ROOT/boot/" 2>/dev/null
# fstests for -o fstests
cp -a "$MINI" "$ROOT/root/mini-fstests"
rm -rf "$ROOT/root/mini-fstests/results" "$ROOT/root/mini-fstests/local.config"
check "the guest has sshd, the key, networkd and the kernel's modules" test -x "$ROOT/usr/sbin/sshd" \
	-a -s "$ROOT/root/.ssh/authorized_keys" \
	-a -L "$ROOT/etc/systemd/system/multi-user.target.wants/systemd-networkd.service" \
	-a -f "$ROOT/usr/lib/modules/$KVER/modules.dep" -a -x "$ROOT/root/mini-fstests/check"
if ! mke2fs -q -t ext4 -L fswb-ssh-root -d "$ROOT" "$T/root.img" 1536M >"$T/mke2fs.log" 2>&1; then
	fail "mke2fs -d makes the guest's root image" "$(cat "$T/mke2fs.log")"
	done_testing
	exit 1
fi
rm -rf "$ROOT"
truncate -s 512M "$T/test.img" "$T/scratch.img"
took "guest image" $t0

# ---- 2. boot it under TCG, in a network namespace of its own -----------------
# QEMU is the namespace: unshare -n execs a shell that brings lo up and execs
# QEMU, so the namespace ends with it. fswb and ssh join it with nsenter.
t0=$SECONDS
unshare -n sh -c 'ip link set lo up && exec "$@"' qemu \
	qemu-system-x86_64 -accel tcg -m 1G -smp 1 -name fswb-ssh-guest \
	-kernel "/boot/vmlinuz-$KVER" -initrd "/boot/initrd.img-$KVER" \
	-append 'root=/dev/vda rw console=ttyS0 panic=1 net.ifnames=0' \
	-drive "file=$T/root.img,if=virtio,format=raw" \
	-drive "file=$T/test.img,if=virtio,format=raw" \
	-drive "file=$T/scratch.img,if=virtio,format=raw" \
	-netdev "user,id=n,restrict=on,hostfwd=tcp:127.0.0.1:$PORT-:22" \
	-device virtio-net-pci,netdev=n \
	-display none -monitor none -serial "file:$T/serial.log" >"$T/qemu.log" 2>&1 &
QPID=$!
NETNS=
stop_qemu() {
	kill "$QPID" 2>/dev/null || return 0
	timeout 20 tail --pid="$QPID" -f /dev/null 2>/dev/null || kill -9 "$QPID" 2>/dev/null
	wait "$QPID" 2>/dev/null
	return 0
}
at_exit stop_qemu
sleep 1
NETNS=$(readlink "/proc/$QPID/ns/net" 2>/dev/null)
check "QEMU runs in a network namespace of its own" \
	test -n "$NETNS" -a "$NETNS" != "$(readlink /proc/self/ns/net)"
inns() { nsenter -t "$QPID" -n -- "$@"; }

printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cut -d' ' -f1-2 "$T/host_key.pub")" >"$T/ssh_known_hosts"
# the OpenSSH client with the test's key, checking the guest's known key
gssh() {
	inns timeout "${GSSH_TIMEOUT:-30}" ssh -F /dev/null -n -i "$T/client_key" -p "$PORT" \
		-o BatchMode=yes -o ConnectTimeout=10 -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$T/ssh_known_hosts" -o GlobalKnownHostsFile=/dev/null \
		-o ServerAliveInterval=2 -o ServerAliveCountMax=3 -o LogLevel=ERROR \
		root@127.0.0.1 "$@"
}
wait_ssh() { # wait_ssh SECONDS
	local until=$((SECONDS + $1))
	while [ $SECONDS -lt $until ]; do
		kill -0 "$QPID" 2>/dev/null || return 1
		gssh true 2>/dev/null && return 0
		sleep 2
	done
	return 1
}
if ! wait_ssh 300; then
	fail "the guest boots and its sshd answers within 300 s" "$(serial_tail 25; cat "$T/qemu.log")"
	done_testing
	exit 1
fi
pass "the guest boots under TCG and its sshd answers ($((SECONDS - t0)) s)"
took "boot" $t0
disks=$(gssh 'findmnt -no SOURCE /; lsblk -dno NAME,SIZE /dev/vdb /dev/vdc' | tr -s ' \n' ' ')
check "the guest's disks are vda (root), vdb and vdc ($disks)" test "$disks" = "/dev/vda vdb 512M vdc 512M "

FSWB_SSH=(--backend ssh -o host=127.0.0.1 -o "port=$PORT" -o "key=$T/client_key"
	-o fstests=/root/mini-fstests -o boot=240 -c ext4/4k)
# fswb in the namespace, bounded: fswb_run SECONDS ARGS... (stdout $T/out, stderr $T/err)
fswb_run() {
	local limit=$1
	shift
	inns timeout -k 10 "$limit" "$FSWB" run "${FSWB_SSH[@]}" "$@" >"$T/out" 2>"$T/err" </dev/null
}
why() { tail -n 4 "$T/err" 2>/dev/null | tr '\n' ' '; }
status_of() { jq -r --arg t "$1" '.sections[].tests[] | select(.test == $t) | .status' "$2/run.json"; }
KNOWN=$FSWB_HOME/data/ssh/known_hosts

# ---- 3. an unknown host key ----------------------------------------------------
fswb_run 120 -o test=/dev/vdb -o scratch=/dev/vdc --yes-destroy /dev/vdb,/dev/vdc generic/001
rc=$?
check "an unknown host key is refused (rc=$rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "the refusal names the key's fingerprint $HOST_FP" grep -qF "$HOST_FP" "$T/out" "$T/err"
check "and says how to accept it" grep -q -- '--accept-new-host-key' "$T/out" "$T/err"
check "the refused key is not recorded" sh -c "! grep -qs ssh-ed25519 '$KNOWN'"
check "nothing was done on the guest (no work directory)" gssh 'test ! -e /var/tmp/fswb'

# ---- 4. a whole run, the key accepted ------------------------------------------
t0=$SECONDS
fswb_run 600 -o test=/dev/vdb -o scratch=/dev/vdc --yes-destroy /dev/vdb,/dev/vdc \
	--accept-new-host-key generic/001 generic/002 generic/003 ext4/001
rc=$?
run=$(last_run)
check "a run with --accept-new-host-key passes (rc=$rc; $(why))" test "$rc" -eq 0
check "the key is kept in fswb's known_hosts with its fingerprint" \
	sh -c "ssh-keygen -lf '$KNOWN' | grep -qF '$HOST_FP'"
for t in generic/001 generic/002 generic/003 ext4/001; do
	s=$(status_of "$t" "$run" 2>/dev/null)
	check "$t passes on the guest (run.json: ${s:-none})" test "$s" = pass
done
check "run.json counts 4 passed of 4" \
	jq -e '.counts.ran == 4 and .counts.passed == 4 and .finished == true' "$run/run.json"
check "run.json names the guest's kernel" jq -e --arg k "$KVER" '.kernel == $k' "$run/run.json"
check "the run's kernel.log has the guest's lines" grep -q 'run fstests generic/001' "$run/kernel.log"
check "and its console.log" grep -q 'run fstests generic/001' "$run/console.log"
check "the guest's own kernel messages too (its disks)" grep -q 'EXT4-fs (vdb)' "$run/kernel.log"
check "the test's kernel-log slice is kept" grep -q 'run fstests generic/002' \
	"$run/results/ext4-4k/generic/002.kmsg"
check "the summary line" grep -qE '^ext4/4k: 4 tests, 0 failures, 0 skipped, [0-9]+ seconds$' "$T/out"
took "whole run" $t0

# ---- 5. devices ------------------------------------------------------------------
# what the devices hold: a checksum of their first 8 MiB (a mkfs rewrites it)
heads() { gssh 'for d in /dev/vdb /dev/vdc; do head -c 8M $d | md5sum; done' | cut -c1-8 | tr '\n' ' '; }
before=$(heads)
fswb_run 120 -o test=/dev/vdb -o scratch=/dev/vdc --yes-destroy /dev/vdb generic/001
rc=$?
check "a device not confirmed is refused (rc=$rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "the refusal names it, its size and what it holds, and how to confirm" \
	grep -qE '/dev/vdc \(512\.0 MiB, [^)]*\) on root@127\.0\.0\.1:[0-9]+, destroying what it holds.*--yes-destroy /dev/vdc' "$T/out" "$T/err"
check "the confirmed one is not asked again" sh -c "! grep -q 'yes-destroy /dev/vdb' '$T/out' '$T/err'"
fswb_run 120 -o test=/dev/vda -o scratch=/dev/vdc --yes-destroy /dev/vda,/dev/vdc generic/001
rc=$?
check "the root device is refused even when confirmed (rc=$rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "the refusal says it holds the root file system" \
	grep -qE '/dev/vda \([^)]*mounted on /\) holds the root file system.*never' "$T/out" "$T/err"
after=$(heads)
check "neither refused run wrote to vdb or vdc ($before, $after)" test "${#before}" -eq 18 -a "$before" = "$after"
check "the guest's root is still mounted read-write" gssh 'findmnt -no OPTIONS / | grep -q "^rw"'

# ---- 6. a kernel panic in the middle of a test -----------------------------------
# A watcher in the guest (the OpenSSH client's session) waits for generic/012
# to run, stops it (SIGSTOP: a slow host cannot let it end first), then panics
# the kernel with sysrq-c a second later. panic=1: the guest reboots.
# check runs the tests sorted: generic/001 ends first (so fswb starts a new
# session after the crash), selftest/001 is what remains.
t0=$SECONDS
GSSH_TIMEOUT=600 gssh 'i=0; while [ $i -lt 2500 ]; do
	if p=$(pgrep -f "tests/generic/01[2]") && kill -STOP $p; then
		echo "generic/012 runs (held: $p): sysrq-c in a second"; sleep 1; sync
		echo 1 >/proc/sys/kernel/sysrq; echo c >/proc/sysrq-trigger; sleep 10; exit 1
	fi
	sleep 0.2; i=$((i + 1)); done; echo "generic/012 never ran"; exit 1' >"$T/watcher.log" 2>&1 &
WATCHER=$!
at_exit "kill $WATCHER 2>/dev/null"
fswb_run 600 -o test=/dev/vdb -o scratch=/dev/vdc --yes-destroy /dev/vdb,/dev/vdc \
	generic/001 generic/012 selftest/001
rc=$?
secs=$((SECONDS - t0))
kill "$WATCHER" 2>/dev/null
wait "$WATCHER" 2>/dev/null
run=$(last_run)
check "the guest panicked in generic/012 (serial console)" sh -c \
	"grep -q 'Kernel panic - not syncing: sysrq triggered crash' '$T/serial.log' || ! cat '$T/watcher.log'"
check "and booted again" test "$(grep -c 'Linux version' "$T/serial.log")" -ge 2
check "fswb ends in bounded time with the failure (rc=$rc, ${secs}s; $(why))" test "$rc" -eq 1
check "generic/001 passed before the panic" test "$(status_of generic/001 "$run")" = pass
check "generic/012 is recorded as crashed (run.json: $(status_of generic/012 "$run"))" \
	test "$(status_of generic/012 "$run")" = crashed
check "the crashed test has the guest's kernel lines up to the panic" \
	jq -e '.sections[].tests[] | select(.test == "generic/012") |
		.detail | test("run fstests generic/012")' "$run/run.json"
check "its kernel-log slice is kept" grep -q 'run fstests generic/012' \
	"$run/results/ext4-4k/generic/012.kmsg"
check "the connection loss is the reason" grep -q 'the connection to root@127.0.0.1:'"$PORT" "$T/err"
check "a new session for the remaining tests" \
	grep -q 'starting a new guest for the remaining tests' "$T/err"
check "it reconnected after the reboot" test "$(grep -c '^\[boot\] ready' "$T/out")" -eq 2
check "the remaining test passes (run.json: $(status_of selftest/001 "$run"))" \
	test "$(status_of selftest/001 "$run")" = pass
check "run.json counts 3 ran, 2 passed, 1 crashed" \
	jq -e '.counts.ran == 3 and .counts.passed == 2 and .counts.crashed == 1' "$run/run.json"
took "panic run" $t0

# ---- 7. nothing left ------------------------------------------------------------
stop_qemu
check "QEMU is gone" sh -c "! kill -0 $QPID 2>/dev/null"
in_ns=
for p in /proc/[0-9]*; do
	[ "$(readlink "$p/ns/net" 2>/dev/null)" = "$NETNS" ] && in_ns="$in_ns ${p#/proc/}"
done
check "the namespace is gone: no process left in it (${in_ns:-none})" test -z "$in_ns"
check "no lease is left" sh -c "! ls '$FSWB_HOME/data/leases/' 2>/dev/null | grep -q ."
echo "# the whole test: $((SECONDS - STARTED)) s"
done_testing
