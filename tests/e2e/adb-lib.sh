#!/usr/bin/env bash
# A private adb server and test "Android devices" for the adb backend's
# end-to-end tests: the real adb client and server (Debian's adb 29.0.6)
# talk over TCP to tests/e2e/adbd.py, an adbd written for the tests (the
# device side of the ADB protocol: shell v1/v2, exec, sync, auth, reboot).
# The device's userland is this host seen through a mount namespace of its
# own: PATH is a directory of toybox applets with mksh as sh, /data a tmpfs.
#
#   . "$(dirname "$0")/../lib.sh"
#   . "$(dirname "$0")/adb-lib.sh"        skips the whole file unless this is
#                                          root with adb, toybox, mksh,
#                                          python3, unshare and nsenter
#   adb_server_start                       the private adb server (at_exit
#                                          stops it); exports its variables
#   adb_device_start NAME [ADBD-OPTS...]   a device (adbd.py options: --auth
#                                          KEYFILE, --no-shell-v2, --no-root,
#                                          --prop K=V, --model M, ...), then
#                                          adb connect and a wait for the
#                                          state "device" (or "unauthorized")
#   adb_device_use NAME                    sets the ADB_* device variables
#                                          again for an earlier device
#   adb_state NAME                         its state as `adb devices` shows it
#                                          (device, unauthorized, offline, or
#                                          nothing when the server has none)
#   adb_device_wait NAME                   waits (ADB_WAIT s) until the server
#                                          has it as "device" or "unauthorized"
#                                          (e.g. after a reboot); sets ADB_*
#   adb_connect NAME                       adb connect, then adb_device_wait
#   adbsh NAME CMD...                      adb -s SERIAL shell CMD...
#   adb_device_exec NAME CMD...            CMD in the device's mount namespace
#                                          (nsenter; host PATH), as root
#   adb_device_reboot NAME                 SIGUSR1: the device reboots
#   adb_device_stop NAME                   adb disconnect, adbd killed with its
#                                          processes, namespace and loop
#                                          devices (at_exit does it too)
#   adb_server_stop                        adb kill-server, then by pid
#
# Variables. After adb_server_start (exported: fswb's adb calls use them):
#   ANDROID_ADB_SERVER_PORT  the server's port on 127.0.0.1 (a free one)
#   HOME                     $T/adbhome: the server made ~/.android/adbkey
#                            and adbkey.pub there (nothing of the host's
#                            ~/.android is read or changed); ADB_VENDOR_KEYS
#                            is unset
#   ADB_KEY_PUB              $HOME/.android/adbkey.pub (for --auth)
#   ADB_SERVER_PID, ADB_SERVER_LOG
#   TMPDIR is not changed: the server runs as `adb nodaemon server`, which
#   logs to ADB_SERVER_LOG instead of /tmp/adb.UID.log.
# After adb_device_start and adb_device_use (not exported):
#   ADB_SERIAL    127.0.0.1:PORT, what adb -s takes
#   ADB_PORT      the adbd's port
#   ADB_PID       the adbd's pid (the first process of its mount namespace)
#   ADB_DIR       $T/adb-NAME: bin/ (the device's /system/bin), adbd.log,
#                 adbd.out (its stderr), connect.log (adb connect's output)
#   ADB_LOG       adbd.py's log (no key material)
#   ADB_STATE     the state the wait ended with
# Settings: ADB_DATA_SIZE (the /data tmpfs's size, 3g), ADB_WAIT (seconds a
# wait may take, 30).
#
# The device: adbd.py runs under `unshare -m --propagation private` in a
# root of its own (pivot_root): a tmpfs with every top-level entry of the
# host's / bind-mounted in (rbind; symlinks copied) except /data and
# /system, plus
#   /data        a tmpfs (source "fswb-adb-NAME", mode 0771, size
#                ADB_DATA_SIZE), with /data/local/tmp owned by uid 2000
#                (the shell user of --no-root devices) and mode 0771
#   /system/bin  $ADB_DIR/bin bound: the device's PATH (PATH=/system/bin,
#                HOME=/data, cwd /): a symlink per toybox applet and
#                toybox itself, sh -> mksh, getprop (written by adbd.py
#                from its properties), and gzip: a shim for `gzip -d` only
#                (toybox zcat) because Debian's toybox has no gzip applet,
#                which toybox tar -z runs (Android's toybox has one)
# The host's / is not changed (its /data need not exist, and is not seen).
# Mounts made on the device stay in its namespace (the host sees none of
# them); /proc, /sys and /dev are the host's, so the device can bind-mount
# them (into /data/...) and losetup files under /data on the host's loop
# devices. The namespace's only process but the device's commands is
# adbd.py (ADB_PID): on a reboot and at the stop it kills every other
# process of its namespace, unmounts (lazily) what is mounted under /data
# and detaches the loop devices backed by files under /data; /data's
# files survive a reboot. adb_device_stop then kills whatever is left in
# the namespace and detaches, from the host, any loop device still backed
# by a file on the device's tmpfs (losetup's BACK-MAJ:MIN); with its last
# process the namespace and its mounts go.
#
# What adb 29.0.6 does (seen with it; the self-test below checks most):
# - a device that demands auth and does not take the server's key: the
#   server offers its public key, the device stays "unauthorized" in
#   `adb devices` (-l: "SERIAL unauthorized transport_id:N", no product,
#   model or device); `adb connect` prints "failed to authenticate to
#   127.0.0.1:PORT" (then "already connected to ...") with exit status 0;
#   get-state, shell, push... fail with "error: device unauthorized."
#   (exit status 1); wait-for-device blocks.
# - a device without shell_v2: `adb shell CMD` runs it through the v1
#   "shell:" service: stdout and stderr merged, and the exit status is
#   always 0 (`adb shell 'exit 3'` gives 0: append `; echo $?` to know
#   it); `adb shell -T CMD` is refused by the client: "error: device only
#   supports allocating a pty", status 1. exec-out works as ever.
# - a dropped `adb connect` device (the device rebooted: its TCP
#   connection closed): the server keeps it, "offline", and reconnects by
#   itself (ReconnectHandler): a first try at once, then one every 10 s;
#   after 7 failed tries (about 60 s) it gives up and removes the device
#   from its list, and only `adb connect` brings it back. A device that is
#   back within the minute is "device" again without another adb connect
#   (the self-test: a 3 s reboot is back after about 10 s, the next try).
#
# Executed rather than sourced, this file tests itself with the real adb.

_adb_self_test=""
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	_adb_self_test=1
	. "$(dirname "$0")/../lib.sh"
fi

_adb_give_up()
{
	skip "${ADB_WHAT:-adb backend through a test adbd}" "$1"
	done_testing
	exit 0
}

[ "$(id -u)" -eq 0 ] || _adb_give_up "needs root (a mount namespace, a tmpfs on /data)"
for _p in adb toybox mksh python3 unshare nsenter losetup mount umount; do
	command -v "$_p" >/dev/null 2>&1 || _adb_give_up "$_p is not installed (make deps)"
done
unset _p
unshare -m true 2>/dev/null || _adb_give_up "unshare -m does not work here (no new mount namespace)"

ADB_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ADBD_PY=$ADB_LIB_DIR/adbd.py
ADB_WAIT=${ADB_WAIT:-30}
ADB_DATA_SIZE=${ADB_DATA_SIZE:-3g}
_ADB_PYTHON=$(command -v python3)
_ADB_MKSH=$(command -v mksh)
_ADB_TOYBOX=$(command -v toybox)

_adb_dir() { printf '%s/adb-%s' "$T" "$1"; }

# A TCP port nobody listens on, outside the ports the adb server probes for
# emulators (5554-5585).
_adb_free_port()
{
	local port hex i
	for ((i = 0; i < 100; i++)); do
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		printf -v hex ':%04X ' "$port"
		grep -q "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null && continue
		echo "$port"
		return 0
	done
	echo "$port"
}

# ---- the server ---------------------------------------------------------------------

adb_server_start()
{
	local i
	if [ -n "${ADB_SERVER_PID:-}" ] && kill -0 "$ADB_SERVER_PID" 2>/dev/null; then
		return 0
	fi
	mkdir -p "$T/adbhome"
	export HOME=$T/adbhome
	unset ADB_VENDOR_KEYS ANDROID_SERIAL ADB_TRACE
	export ANDROID_ADB_SERVER_PORT
	ADB_SERVER_LOG=$T/adb-server.log
	ADB_KEY_PUB=$HOME/.android/adbkey.pub
	export ADB_KEY_PUB ADB_SERVER_LOG
	at_exit adb_server_stop
	for ((try = 0; try < 5; try++)); do
		ANDROID_ADB_SERVER_PORT=$(_adb_free_port)
		adb -P "$ANDROID_ADB_SERVER_PORT" nodaemon server >>"$ADB_SERVER_LOG" 2>&1 </dev/null &
		ADB_SERVER_PID=$!
		export ADB_SERVER_PID
		for ((i = 0; i < ADB_WAIT * 10; i++)); do
			if ! kill -0 "$ADB_SERVER_PID" 2>/dev/null; then
				wait "$ADB_SERVER_PID" 2>/dev/null
				break
			fi
			# not adb devices: a client that finds no server starts one
			if (exec 3<>"/dev/tcp/127.0.0.1/$ANDROID_ADB_SERVER_PORT") 2>/dev/null &&
				[ -s "$ADB_KEY_PUB" ] && adb devices >/dev/null 2>&1; then
				return 0
			fi
			sleep 0.1
		done
		kill -0 "$ADB_SERVER_PID" 2>/dev/null && break
	done
	echo "adb_server_start: the adb server did not start; $ADB_SERVER_LOG:" >&2
	tail -n 20 "$ADB_SERVER_LOG" >&2
	return 1
}

adb_server_stop()
{
	local i
	[ -n "${ADB_SERVER_PID:-}" ] || return 0
	adb kill-server >/dev/null 2>&1
	for ((i = 0; i < 50; i++)); do
		kill -0 "$ADB_SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$ADB_SERVER_PID" 2>/dev/null
	wait "$ADB_SERVER_PID" 2>/dev/null
	ADB_SERVER_PID=
	return 0
}

# ---- devices ------------------------------------------------------------------------

adb_device_use()
{
	local d
	d=$(_adb_dir "$1")
	[ -s "$d/port" ] || {
		echo "adb_device_use: no device named $1" >&2
		return 1
	}
	ADB_DIR=$d
	ADB_PORT=$(cat "$d/port")
	ADB_SERIAL=127.0.0.1:$ADB_PORT
	ADB_PID=$(cat "$d/adbd.pid" 2>/dev/null)
	# shellcheck disable=SC2034 # for the tests
	ADB_LOG=$d/adbd.log
	ADB_STATE=$(cat "$d/state" 2>/dev/null)
}

adb_state()
{
	local d
	d=$(_adb_dir "$1")
	adb devices 2>/dev/null | awk -v s="127.0.0.1:$(cat "$d/port" 2>/dev/null)" \
		'$1 == s { print $2 }'
}

# Waits until the server has NAME as "device" or "unauthorized"; 1 after
# ADB_WAIT seconds.
adb_device_wait()
{
	local d st i
	d=$(_adb_dir "$1")
	for ((i = 0; i < ADB_WAIT * 10; i++)); do
		st=$(adb_state "$1")
		case $st in
		device | unauthorized)
			echo "$st" >"$d/state"
			adb_device_use "$1"
			return 0
			;;
		esac
		sleep 0.1
	done
	echo "adb_device_wait: $1 is '${st:-not listed}' after $ADB_WAIT s" >&2
	return 1
}

adb_connect()
{
	local d out
	d=$(_adb_dir "$1")
	out=$(adb connect "127.0.0.1:$(cat "$d/port")" 2>&1)
	echo "$out" >>"$d/connect.log"
	adb_device_wait "$1"
}

adbsh()
{
	local d
	d=$(_adb_dir "$1")
	shift
	adb -s "127.0.0.1:$(cat "$d/port")" shell "$@"
}

adb_device_exec()
{
	local d pid
	d=$(_adb_dir "$1")
	shift
	pid=$(cat "$d/adbd.pid" 2>/dev/null) || return 1
	nsenter -t "$pid" -m -- "$@"
}

adb_device_reboot()
{
	local pid
	pid=$(cat "$(_adb_dir "$1")/adbd.pid" 2>/dev/null) || return 1
	kill -USR1 "$pid"
}

_adb_make_bin()
{
	local bin=$1 a
	mkdir -p "$bin"
	for a in $("$_ADB_TOYBOX"); do
		ln -sf "$_ADB_TOYBOX" "$bin/$a"
	done
	ln -sf "$_ADB_TOYBOX" "$bin/toybox"
	ln -sf "$_ADB_MKSH" "$bin/sh"
	cat >"$bin/gzip" <<-EOF
		#!$_ADB_MKSH
		# gzip -d for toybox tar -z (Debian's toybox has no gzip applet)
		for a; do
			case \$a in
			-d | -dc | -cd | -df | -fd) exec toybox zcat ;;
			esac
		done
		echo "gzip: only -d (decompression to stdout) on this test device" >&2
		exit 1
	EOF
	chmod 0755 "$bin/gzip"
}

adb_device_start()
{
	local name=$1 d port i
	shift
	d=$(_adb_dir "$name")
	if [ -e "$d" ]; then
		echo "adb_device_start: $name was started already" >&2
		return 1
	fi
	[ -n "${ADB_SERVER_PID:-}" ] || adb_server_start || return 1
	mkdir -p "$d/root"
	_adb_make_bin "$d/bin"
	chmod 0755 "$d/bin"
	: >"$d/adbd.log"
	at_exit adb_device_stop "$name"
	port=$(_adb_free_port)
	echo "$port" >"$d/port"
	# A new root: a tmpfs with every top-level entry of / bound in but /data,
	# and a tmpfs of its own on /data. The host's / is not changed.
	# shellcheck disable=SC2016 # expanded by the shell in the namespace
	unshare -m --propagation private sh -euc '
		d=$1 name=$2 size=$3
		shift 3
		r=$d/root
		mount -n -t tmpfs -o mode=0755 "fswb-adb-root-$name" "$r"
		for e in /* /.[!.]*; do
			[ -e "$e" ] || [ -L "$e" ] || continue
			n=$r/${e##*/}
			case $e in /data | /system) continue ;; esac
			if [ -L "$e" ]; then
				cp -P "$e" "$n"
			elif [ -d "$e" ]; then
				mkdir "$n"
				mount -n --rbind "$e" "$n"
			else
				: >"$n"
				mount -n --bind "$e" "$n"
			fi
		done
		mkdir -m 0771 "$r/data"
		mkdir -m 0755 "$r/.oldroot" "$r/system" "$r/system/bin"
		mount -n --bind "$d/bin" "$r/system/bin"
		mount -n -t tmpfs -o "size=$size,mode=0771" "fswb-adb-$name" "$r/data"
		cd "$r"
		pivot_root . .oldroot
		cd /
		umount -n -l /.oldroot
		rmdir /.oldroot
		# the new root as the copy of /tmp (or wherever $T is) saw it
		umount -n -l "$r" 2>/dev/null || true
		mkdir -p /data/local/tmp
		chmod 0751 /data/local
		chown 2000:2000 /data/local/tmp
		chmod 0771 /data/local/tmp
		stat -c "%d" /data >"$d/data-dev"
		exec "$@"
	' adb-device "$d" "$name" "$ADB_DATA_SIZE" \
		"$_ADB_PYTHON" "$ADBD_PY" --port "$port" --pidfile "$d/adbd.pid" \
		--log "$d/adbd.log" --bin /system/bin --serialno "fswb-$name" "$@" \
		>>"$d/adbd.out" 2>&1 </dev/null &
	echo $! >"$d/ns-pid"
	# no "Killed" job notice when it is killed: kill -0 and /proc follow it
	disown $!
	for ((i = 0; i < ADB_WAIT * 10; i++)); do
		[ -s "$d/adbd.pid" ] && break
		if ! kill -0 "$(cat "$d/ns-pid")" 2>/dev/null; then
			echo "adb_device_start: adbd.py ended before it listened; $d/adbd.out:" >&2
			tail -n 20 "$d/adbd.out" >&2
			return 1
		fi
		sleep 0.1
	done
	[ -s "$d/adbd.pid" ] || {
		echo "adb_device_start: adbd.py does not listen after $ADB_WAIT s" >&2
		return 1
	}
	readlink "/proc/$(cat "$d/adbd.pid")/ns/mnt" >"$d/ns"
	adb_connect "$name"
}

# Detaches the host's loop devices backed by a file on the device's tmpfs.
_adb_detach_loops()
{
	local d dev majmin n back
	d=$(_adb_dir "$1")
	dev=$(cat "$d/data-dev" 2>/dev/null) || return 0
	[ -n "$dev" ] || return 0
	majmin=$((dev >> 8 & 0xfff)):$(((dev & 0xff) | (dev >> 12 & 0xfff00)))
	losetup -l -n -O NAME,MAJ:MIN,BACK-MAJ:MIN 2>/dev/null | while read -r n _ back; do
		[ "$back" = "$majmin" ] || continue
		echo "adb_device_stop: detaching $n (backed by a file of $1's /data)" >&2
		losetup -d "$n" 2>/dev/null
	done
	return 0
}

adb_device_stop()
{
	local name=$1 d pid nspid i p ns
	d=$(_adb_dir "$name")
	[ -s "$d/port" ] || return 0
	[ -e "$d/stopped" ] && return 0
	if [ -n "${ADB_SERVER_PID:-}" ]; then
		adb disconnect "127.0.0.1:$(cat "$d/port")" >/dev/null 2>&1
	fi
	pid=$(cat "$d/adbd.pid" 2>/dev/null)
	nspid=$(cat "$d/ns-pid" 2>/dev/null)
	for p in $pid $nspid; do
		kill -TERM "$p" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	# adbd kills its processes itself; these are left when it could not
	ns=$(cat "$d/ns" 2>/dev/null)
	if [ -n "$ns" ]; then
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ] && kill -KILL "${p#/proc/}" 2>/dev/null
		done
	fi
	_adb_detach_loops "$name"
	: >"$d/stopped"
	return 0
}

[ -n "$_adb_self_test" ] || return 0

# ---- the self-test, with the real adb -------------------------------------------------


# like check, but in this shell (the function sets variables)
in_shell()
{
	local name=$1
	shift
	if "$@" >"$T/now.out" 2>&1; then pass "$name"; else fail "$name" "$(tail -n 20 "$T/now.out")"; fi
}

host_android=$(ls -A /root/.android 2>/dev/null; echo "$?")
host_tmp_adb=$(ls -d /tmp/adb.* 2>/dev/null)
host_data=$(ls -ld /data 2>/dev/null)

in_shell "adb_server_start" adb_server_start
check "... on a port of its own, with its pid" \
	eval '[ "$ANDROID_ADB_SERVER_PORT" != 5037 ] && kill -0 "$ADB_SERVER_PID"'
check "... and its key made in \$T/adbhome" test -s "$T/adbhome/.android/adbkey.pub" -a "$ADB_KEY_PUB" = "$T/adbhome/.android/adbkey.pub"

in_shell "adb_device_start main" adb_device_start main --model Fswb_Model --product fswb_product \
	--device fswb_device --prop ro.product.cpu.abi=x86_64 --prop ro.build.version.release=14
MAIN=$ADB_SERIAL
check "adb devices -l shows its product, model and device" \
	eval 'adb devices -l | grep -E "^$MAIN +device product:fswb_product model:Fswb_Model device:fswb_device( |\$)"'
check "adb -s SERIAL get-state: device" test "$(adb -s "$MAIN" get-state 2>&1)" = device
out=$(adbsh main 'echo out; echo err >&2; exit 3' 2>"$T/err")
check "adb shell 'exit 3' gives the status 3 (shell v2)" test $? -eq 3
check "... stdout and stderr apart" test "$out/$(cat "$T/err")" = "out/err"
out=$(echo 'echo "$PATH $HOME $(pwd)"; exit 5' | adb -s "$MAIN" shell)
check "adb shell without a command: sh reading stdin (status 5)" test $? -eq 5
check "... with PATH=/system/bin, HOME=/data, cwd /" test "$out" = "/system/bin /data /"
check "... and no other environment (but mksh's \$_)" \
	test "$(adbsh main env | grep -v '^_=' | sort | tr '\n' ' ')" = "HOME=/data PATH=/system/bin "
check "getprop ro.product.cpu.abi" test "$(adbsh main getprop ro.product.cpu.abi)" = x86_64
check "getprop lists [KEY]: [VALUE]" eval 'adbsh main getprop | grep -qxF "[ro.build.version.release]: [14]"'
check "adb root: already running as root" \
	test "$(adb -s "$MAIN" root 2>&1)" = "adbd is already running as root"

python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 512)' >"$T/bytes"
adb -s "$MAIN" shell -T cat <"$T/bytes" >"$T/bytes.back"
check "adb shell -T cat: every byte value back as it went" cmp "$T/bytes" "$T/bytes.back"
check "adb push (the 256 byte values)" adb -s "$MAIN" push "$T/bytes" /data/local/tmp/bytes
adb -s "$MAIN" exec-out 'cat /data/local/tmp/bytes; echo stderr >&2' >"$T/bytes.exec"
check "adb exec-out: binary-exact, no stderr" cmp "$T/bytes" "$T/bytes.exec"
head -c 20M /dev/urandom >"$T/big"
check "adb push of 20 MiB" adb -s "$MAIN" push "$T/big" /data/local/tmp/sub/big
check "adb pull of it" adb -s "$MAIN" pull /data/local/tmp/sub/big "$T/big.back"
check "... byte-identical" cmp "$T/big" "$T/big.back"
check "... with the local file's mode" test "$(adbsh main stat -c %a /data/local/tmp/sub/big)" = "$(stat -c %a "$T/big")"
check "adb shell ls of the sync's directory (no temp file left)" \
	test "$(adbsh main ls -A /data/local/tmp/sub)" = big

adbsh main 'echo a >/data/one; sleep 2; echo b >>/data/one' &
sleep 0.5
adbsh main 'echo c >>/data/one'
wait $!
check "two shells at once (streams multiplexed)" test "$(adbsh main cat /data/one | tr '\n' ' ')" = "a c b "
timeout 2 adb -s "$MAIN" shell 'sleep 301' >/dev/null 2>&1
sleep 1.5
check "a client that goes away: its command is killed" eval '! pgrep -f "sleep 301" >/dev/null'

mkdir -p "$T/tree/etc" "$T/tree/usr/bin"
echo chroot-ok >"$T/tree/etc/hello"
ln -s ../../etc/hello "$T/tree/usr/bin/link"
tar -C "$T/tree" -czf "$T/tree.tgz" .
adb -s "$MAIN" push "$T/tree.tgz" /data/tree.tgz >/dev/null
check "toybox tar -xzf of a pushed tarball in /data" \
	adbsh main 'mkdir -p /data/root && cd /data/root && toybox tar -xzf /data/tree.tgz && test "$(cat usr/bin/link)" = chroot-ok'
check "chroot + mount --bind /proc, /usr into /data/root" adbsh main '
	cd /data/root && mkdir -p proc usr lib lib64 bin &&
	mount --bind /proc proc && mount --bind /usr usr &&
	mount --bind /lib lib && mount --bind /lib64 lib64 && mount --bind /usr/bin bin &&
	chroot /data/root /usr/bin/toybox cat /etc/hello /proc/self/comm'
check "losetup of a file under /data" adbsh main \
	'toybox truncate -s 8m /data/lo.img && losetup -f /data/lo.img && losetup -a | grep -q /data/lo.img'
check "the host sees none of the device's mounts" \
	eval '! grep -E "fswb-adb|/data/root" /proc/self/mountinfo'

# the device reboots
adbsh main 'sleep 302 >/dev/null 2>&1 </dev/null &'
check "(a process left running on the device)" eval 'pgrep -f "sleep 302" >/dev/null'
adb_device_reboot main
t0=$SECONDS
for ((i = 0; i < 100; i++)); do [ "$(adb_state main)" = device ] || break; sleep 0.1; done
check "adb_device_reboot: the device drops" test "$(adb_state main)" != device
if adb_device_wait main 2>"$T/now.out"; then
	pass "... and comes back by itself, no adb connect ($((SECONDS - t0)) s)"
else
	fail "... and comes back by itself, no adb connect" "$(tail -5 "$ADB_SERVER_LOG")"
fi
check "... without the processes it had" eval '! pgrep -f "sleep 302" >/dev/null'
check "... nor the mounts under /data" test "$(adbsh main 'grep -c " /data/" /proc/self/mountinfo')" = 0
check "... nor the loop device" eval '! adbsh main "losetup -a" | grep -q /data/lo.img'
check "... with /data's files" test "$(adbsh main cat /data/root/etc/hello)" = chroot-ok

# a small /data
ADB_DATA_SIZE=4m in_shell "adb_device_start with ADB_DATA_SIZE=4m" adb_device_start small
o=$(adb -s "$ADB_SERIAL" push "$T/big" /data/local/tmp/big 2>&1)
check "adb push into a full /data fails" test $? -ne 0
check "... saying No space left on device" eval 'grep -q "No space left on device" <<<"$o"'
check "... and leaves no partial file" test -z "$(adbsh small ls -A /data/local/tmp)"

# shell protocol v1 only
in_shell "adb_device_start --no-shell-v2" adb_device_start v1 --no-shell-v2
out=$(adbsh v1 'echo out; echo err >&2; exit 3' 2>/dev/null)
check "adb shell without shell_v2: 'exit 3' gives the status 0 (adb 29)" test $? -eq 0
check "... stdout and stderr merged" test "$(echo $out)" = "out err"
out=$(adb -s "$ADB_SERIAL" shell -T true 2>&1)
check "... adb shell -T is refused: $out" test $? -ne 0 -a "$out" = "error: device only supports allocating a pty"
check "... adb exec-out works" test "$(adb -s "$ADB_SERIAL" exec-out 'echo x; exit 3')" = x

# not root
in_shell "adb_device_start --no-root" adb_device_start user --no-root
check "... commands run as uid 2000" \
	test "$(adbsh user cat /proc/self/status | awk '$1 == "Uid:" { print $2 $3 }')" = 20002000
check "... adb root is refused" \
	test "$(adb -s "$ADB_SERIAL" root 2>&1)" = "adbd cannot run as root in production builds"
check "... adb push to /data/local/tmp as the shell user" \
	eval 'adb -s "$ADB_SERIAL" push "$T/bytes" /data/local/tmp/b >/dev/null && test "$(adbsh user stat -c %u /data/local/tmp/b)" = 2000'
check "... but not to /data" eval '! adb -s "$ADB_SERIAL" push "$T/bytes" /data/b >/dev/null 2>&1'

# authentication
in_shell "adb_device_start --auth (the server's key)" adb_device_start good --auth "$ADB_KEY_PUB"
check "... authorized" eval 'test "$ADB_STATE" = device && test "$(adbsh good echo hi)" = hi'
python3 -c '
import base64, random, struct, sys
n = random.getrandbits(2048) | 1 << 2047 | 1
raw = struct.pack("<II", 64, 0) + n.to_bytes(256, "little") + bytes(256) + struct.pack("<I", 65537)
print(base64.b64encode(raw).decode() + " other@fswb-test")' >"$T/other.pub"
in_shell "adb_device_start --auth (some other key)" adb_device_start bad --auth "$T/other.pub"
check "... unauthorized" test "$ADB_STATE" = unauthorized
check "... adb connect said: failed to authenticate" grep -qx "failed to authenticate to $ADB_SERIAL" "$ADB_DIR/connect.log"
check "... adb devices -l: unauthorized, no model" \
	eval 'adb devices -l | grep -qE "^$ADB_SERIAL +unauthorized transport_id:[0-9]+\$"'
out=$(adbsh bad true 2>&1)
check "... adb shell fails: device unauthorized" test $? -ne 0 -a "${out%%$'\n'*}" = "error: device unauthorized."
in_shell "adb_device_start --auth other --auth-accept-new" adb_device_start new --auth "$T/other.pub" --auth-accept-new
check "... authorized: the server's key was offered and taken" test "$ADB_STATE" = device
check "adbd.py logs no key material" eval '! grep -qF "$(cut -c1-40 "$ADB_KEY_PUB")" "$T"/adb-*/adbd.log'

# an adbd that dies without its cleanup: adb_device_stop does it
in_shell "adb_device_start crash" adb_device_start crash
adbsh crash 'sleep 303 >/dev/null 2>&1 </dev/null &
	toybox truncate -s 8m /data/lo.img && losetup -f /data/lo.img && mkdir /data/m && mount --bind /proc /data/m'
kill -KILL "$ADB_PID"
adb_device_stop crash
check "adb_device_stop after a kill -9 of adbd: its processes killed" eval '! pgrep -f "sleep 303" >/dev/null'
check "... its loop device detached" eval '! losetup -l -n -O BACK-FILE | grep -qx " */data/lo.img"'

if [ -n "${ADB_SELF_TEST_LONG:-}" ]; then
	in_shell "adb_device_start slow --reboot-seconds 90" adb_device_start slow --reboot-seconds 90
	adb_device_reboot slow
	sleep 30
	check "a device down for 30 s: offline" test "$(adb_state slow)" = offline
	sleep 40
	check "... for 70 s: no longer listed (the server gave up)" test -z "$(adb_state slow)"
	sleep 25
	check "... back, but not listed before adb connect" test -z "$(adb_state slow)"
	in_shell "... adb connect brings it back" adb_connect slow
	adb_device_stop slow
else
	skip "a device down for more than a minute" "ADB_SELF_TEST_LONG is not set"
fi

# the end
for n in main small v1 user good bad new; do
	adb_device_use $n
	pids="${pids:-} $ADB_PID"
	adb_device_stop $n
done
check "adb_device_stop: every adbd gone" eval '! kill -0 $pids 2>/dev/null'
check "... with every process of theirs" eval '! pgrep -f "$T/adb-" >/dev/null'
check "... no loop device backed by a file of theirs left" eval '
	for n in main small v1 user good bad new; do
		dev=$(cat "$T/adb-$n/data-dev")
		mm=$((dev >> 8 & 0xfff)):$(((dev & 0xff) | (dev >> 12 & 0xfff00)))
		losetup -l -n -O BACK-MAJ:MIN | grep -qx " *$mm *" && exit 1
	done; exit 0'
check "... no mount left" eval '! grep -E "fswb-adb|/data" /proc/self/mountinfo'
srv=$ADB_SERVER_PID
adb_server_stop
check "adb_server_stop: the server is gone" eval '! kill -0 $srv 2>/dev/null'
check "the host's /data as before" test "$(ls -ld /data 2>/dev/null)" = "$host_data"
check "the host's ~/.android untouched" test "$(ls -A /root/.android 2>/dev/null; echo "$?")" = "$host_android"
check "no adb log in /tmp" test "$(ls -d /tmp/adb.* 2>/dev/null)" = "$host_tmp_adb"
done_testing
