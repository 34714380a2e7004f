# Shell test helpers: TAP output, scratch directories, cleanup.
#
#   . "$(dirname "$0")/../lib.sh"
#   ok "profiles list" fswb profiles        runs the command, ok when it exits 0
#   check "name" test "$a" = "$b"           same, for any command
#   skip "name" "why"
#   pass "name" / fail "name" "why"
#   done_testing                            prints the plan line; exits 1 on failure
#
# Every test gets a scratch $FSWB_HOME and $HOME under $T (removed at exit)
# and TZ=UTC. Cleanups registered with at_exit run in reverse order.
set -u
export TZ=UTC
SRCDIR=${FSWB_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
FSWB=${FSWB_BIN:-$SRCDIR/build/fswb}
export FSWB_DATADIR=${FSWB_DATADIR:-$SRCDIR}
T=$(mktemp -d "${TMPDIR:-/tmp}/fswb-test.XXXXXX")
export FSWB_HOME=$T/home HOME=$T/home
# the libvirt backend's default: a daemon that is nowhere, whatever this host runs
export LIBVIRT_DEFAULT_URI=qemu:///system?socket=/nonexistent/fswb-test/libvirt-sock
# the adb backend's server: a port where none answers (tests/e2e/adb-lib.sh starts its own)
export ANDROID_ADB_SERVER_PORT=9
mkdir -p "$HOME"
_n=0
_failed=0
_cleanups=()

at_exit() { _cleanups+=("$*"); }
_run_cleanups() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_cleanups[i]}" || true
	done
	rm -rf "$T"
}
trap _run_cleanups EXIT

pass() { _n=$((_n + 1)); echo "ok $_n - $1"; }
fail() {
	_n=$((_n + 1)) _failed=1
	echo "not ok $_n - $1"
	[ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/# /'
	return 0
}
skip() { _n=$((_n + 1)); echo "ok $_n - $1 # SKIP $2"; }
check() {
	local name=$1
	shift
	local out
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$out"; fi
}
ok() { check "$@"; }
done_testing() {
	echo "1..$_n"
	[ "$_failed" -eq 0 ]
}

# need_guest WHAT: skip this whole file (WHAT names it) unless this host can
# boot a fswb guest: QEMU, qemu-img, mmdebstrap and a kernel in /boot.
need_guest() {
	local p
	for p in qemu-system-x86_64 qemu-img mmdebstrap; do
		if ! command -v "$p" >/dev/null 2>&1; then
			skip "$1" "$p is not installed (make deps)"
			done_testing
			exit 0
		fi
	done
	if ! ls /boot/vmlinuz-* >/dev/null 2>&1; then
		skip "$1" "no kernel in /boot (make deps installs one)"
		done_testing
		exit 0
	fi
}
