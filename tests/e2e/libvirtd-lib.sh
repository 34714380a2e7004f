#!/usr/bin/env bash
# Private libvirt daemons for the libvirt backend's end-to-end tests:
# virtlogd -d and libvirtd -d (no systemd), with pidfiles, in a mount
# namespace of their own, stopped at the end.
#
#   . "$(dirname "$0")/../lib.sh"
#   . "$(dirname "$0")/libvirtd-lib.sh"   skips the whole file unless this
#                                          is root with libvirtd, virtlogd,
#                                          virsh and unshare
#   libvirtd_start                         starts both; sets LIBVIRT_URI
#   lvsh ARGS...                           virsh against them
#   libvirtd_stop                          (registered with at_exit)
#
# The namespace: nothing of the host's libvirt may be seen or changed. In it
# /run is a tmpfs with every entry of the host's /run bound back in but
# libvirt (the daemons' own), /var/lib/libvirt, /var/log/libvirt and
# /var/cache/libvirt are tmpfs, and /etc/libvirt is $LVD/etc: libvirtd.conf
# puts the client sockets in $LVD/sock, where fswb reaches them with
# qemu:///system?socket=...; qemu.conf is empty, so QEMU runs as the user
# the package made (libvirt-qemu on Debian), which cannot enter $T: fswb's
# files reach it through the storage pool.

#
# Executed rather than sourced, this file tests itself with virsh.

_lv_self_test=""
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	_lv_self_test=1
	. "$(dirname "$0")/../lib.sh"
fi

_lv_give_up() {
	skip "libvirt backend through a private libvirtd" "$1"
	done_testing
	exit 0
}
[ "$(id -u)" -eq 0 ] || _lv_give_up "needs root (a mount namespace, the daemons' state dirs)"
for _p in libvirtd virtlogd virsh unshare; do
	command -v "$_p" >/dev/null 2>&1 || _lv_give_up "$_p is not installed (make deps)"
done
unshare -m true 2>/dev/null || _lv_give_up "unshare -m does not work here"

LVD=$T/libvirtd
LIBVIRT_URI="qemu:///system?socket=$LVD/sock/libvirt-sock"

lvsh() { virsh -q -c "$LIBVIRT_URI" "$@"; }

libvirtd_start() {
	local i
	mkdir -p "$LVD/etc" "$LVD/sock" "$LVD/hostrun"
	cat >"$LVD/etc/libvirtd.conf" <<-EOF
		unix_sock_dir = "$LVD/sock"
		auth_unix_rw = "none"
		auth_unix_ro = "none"
		log_outputs = "3:file:$LVD/libvirtd.log"
	EOF
	cat >"$LVD/etc/virtlogd.conf" <<-EOF
		log_outputs = "3:file:$LVD/virtlogd.log"
	EOF
	# the packaged default: QEMU runs as libvirt-qemu, which cannot enter $T
	: >"$LVD/etc/qemu.conf"
	cat >"$LVD/start.sh" <<-EOF
		set -e
		mount -n --make-rprivate /
		mount -n --rbind /run "$LVD/hostrun"
		mount -n -t tmpfs -o mode=0755 fswb-e2e-run /run
		for e in "$LVD"/hostrun/* "$LVD"/hostrun/.[!.]*; do
			[ -e "\$e" ] || continue
			n=/run/\${e##*/}
			case \${e##*/} in libvirt) continue ;; esac
			if [ -d "\$e" ]; then mkdir -p "\$n"; mount -n --rbind "\$e" "\$n"
			else touch "\$n"; mount -n --bind "\$e" "\$n"; fi
		done
		umount -n -l "$LVD/hostrun"
		mkdir -m 0755 /run/libvirt
		for d in /var/lib/libvirt /var/log/libvirt /var/cache/libvirt; do
			mkdir -p "\$d" 2>/dev/null || true
			mount -n -t tmpfs -o mode=0755 fswb-e2e-libvirt "\$d"
		done
		mount -n --bind "$LVD/etc" /etc/libvirt
		virtlogd -d -p "$LVD/virtlogd.pid" -f "$LVD/etc/virtlogd.conf"
		libvirtd -d -p "$LVD/libvirtd.pid" -f "$LVD/etc/libvirtd.conf"
	EOF
	at_exit libvirtd_stop
	unshare -m sh "$LVD/start.sh" >"$LVD/start.log" 2>&1 || return 1
	for i in $(seq 1 100); do
		lvsh list >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

libvirtd_stop() {
	local f pid
	for f in "$LVD/libvirtd.pid" "$LVD/virtlogd.pid"; do
		pid=$(cat "$f" 2>/dev/null) || continue
		kill "$pid" 2>/dev/null
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
	done
	return 0
}

[ -n "$_lv_self_test" ] || return 0

# ---- the self-test, with virsh ---------------------------------------------------

run_state() { ls -A /run; ls -A /run/libvirt 2>/dev/null; }
host_run=$(run_state)
host_lib=$(ls -A /var/lib/libvirt 2>/dev/null)
check "libvirtd_start" libvirtd_start
check "virtlogd runs from its pidfile" kill -0 "$(cat "$LVD/virtlogd.pid")"
check "libvirtd runs from its pidfile" kill -0 "$(cat "$LVD/libvirtd.pid")"
check "virsh reaches it at the test's socket" lvsh version
check "it runs QEMU guests" eval 'lvsh capabilities | grep -q "<domain type=.qemu."'
check "its qemu.conf is the packaged default (empty)" test ! -s "$LVD/etc/qemu.conf"
lvsh pool-create-as fswb-self-test dir --target /var/lib/libvirt/images/fswb-self-test --build \
	>/dev/null 2>&1
check "its /var/lib/libvirt is its own (a pool made there)" \
	lvsh pool-info fswb-self-test
check "... which the host does not see" test ! -e /var/lib/libvirt/images/fswb-self-test
check "the host's /run is as before" test "$(run_state)" = "$host_run"
libvirtd_stop
check "libvirtd_stop: libvirtd is gone" eval '! kill -0 "$(cat "$LVD/libvirtd.pid")" 2>/dev/null'
check "... and virtlogd" eval '! kill -0 "$(cat "$LVD/virtlogd.pid")" 2>/dev/null'
check "the host's /var/lib/libvirt is as before" test "$(ls -A /var/lib/libvirt 2>/dev/null)" = "$host_lib"
done_testing
