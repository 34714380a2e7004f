#!/usr/bin/env bash
# A private OpenSSH server on 127.0.0.1 for the ssh backend's end-to-end
# tests: the "test machine" is this host, seen through an sshd that runs in
# a mount namespace of its own, with keys, config and log under $T.
#
#   . "$(dirname "$0")/../lib.sh"
#   . "$(dirname "$0")/sshd-lib.sh"      skips the whole file unless this is
#                                         root with sshd, unshare and nsenter
#   sshd_start NAME || ...                a server; sets the SSHD_* variables
#   sshd_use NAME                         sets them again for an earlier one
#   sshd_rekey NAME                       a new host key, same port
#   sshd_kill_sessions NAME               kills every connection's sshd (the
#                                         clients see the connection drop),
#                                         keeps the listener
#   sshd_exec NAME CMD...                 CMD in the test machine's mounts
#   sshd_procs NAME                       the test machine's processes other
#                                         than the server itself: "PID CMDLINE"
#   sshd_mounts NAME                      the test machine's /proc/mounts
#   sshd_stop NAME                        kills everything in its namespace
#                                         (registered with at_exit by start)
#
# After sshd_start and sshd_use:
#   SSHD_DIR          $T/sshd-NAME: keys, sshd_config, log, state
#   SSHD_PORT         the port on 127.0.0.1
#   SSHD_KEY          the client's private key (ed25519, no passphrase),
#                     authorized for root; its .pub beside it
#   SSHD_HOSTKEY_PUB  the server's public host key file
#   SSHD_HOSTKEY_FP   its fingerprint as ssh shows it: SHA256:...
#   SSHD_KNOWN_HOST   its known_hosts line: [127.0.0.1]:PORT ssh-ed25519 ...
#   SSHD_LOG          the server's log (LogLevel VERBOSE)
#
# The namespace: sshd's privilege separation needs /run/sshd, and nothing
# of the host's /run may change. In the namespace, /run is a tmpfs with every
# entry of the host's /run bound back in but two of its own: sshd, and mount
# (libmount's state of the mounts: the namespace's mounts are its own, and
# mount -n is used to make them). Mounts made in the namespace (by the tests
# the server runs) stay there and end with it; mounts made on the host after
# the start are not seen in it (private propagation):
# mount what the test machine must see with sshd_exec.
#
# Executed rather than sourced, this file tests itself with the real ssh
# client.

_sshd_self_test=""
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	_sshd_self_test=1
	. "$(dirname "$0")/../lib.sh"
fi

_sshd_give_up()
{
	skip "${SSHD_WHAT:-$(basename "$0" .sh)}" "$1"
	done_testing
	exit 0
}

[ "$(id -u)" -eq 0 ] || _sshd_give_up "needs root (a private sshd that logs in as root, unshare -m)"
[ -x /usr/sbin/sshd ] || _sshd_give_up "/usr/sbin/sshd is not installed (make deps installs openssh-server)"
for _p in unshare nsenter ssh-keygen mount umount; do
	command -v "$_p" >/dev/null 2>&1 || _sshd_give_up "$_p is not installed"
done
unset _p
unshare -m true 2>/dev/null || _sshd_give_up "unshare -m does not work here (no new mount namespace)"

# seconds to wait for the server to listen, or to end
SSHD_WAIT=${SSHD_WAIT:-10}

_sshd_dir() { printf '%s/sshd-%s' "$T" "$1"; }

# The namespace's identity ("mnt:[N]") of a process, empty when it is gone.
_sshd_ns() { readlink "/proc/$1/ns/mnt" 2>/dev/null; }

# The processes in NAME's namespace, one PID a line.
_sshd_ns_pids()
{
	local d holder ns p
	d=$(_sshd_dir "$1")
	holder=$(cat "$d/holder" 2>/dev/null) || return 0
	ns=$(cat "$d/ns" 2>/dev/null) || return 0
	[ -n "$ns" ] || return 0
	if [ "$(_sshd_ns "$holder")" = "$ns" ]; then
		# the holder is there: compare without a process per entry
		for p in /proc/[0-9]*; do
			[ "$p/ns/mnt" -ef "/proc/$holder/ns/mnt" ] && echo "${p#/proc/}"
		done
	else
		for p in /proc/[0-9]*; do
			[ "$(_sshd_ns "${p#/proc/}")" = "$ns" ] && echo "${p#/proc/}"
		done
	fi
	return 0
}

_sshd_cmdline() { tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline"; }

# A TCP port nobody listens on (a guess; sshd_start retries on a bind failure).
_sshd_free_port()
{
	local port hex i
	for ((i = 0; i < 50; i++)); do
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		printf -v hex ':%04X ' "$port"
		grep -q "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null && continue
		echo "$port"
		return 0
	done
	echo "$port"
}

_sshd_write_config()
{
	local d=$1 port=$2
	cat >"$d/sshd_config" <<-EOF
		# a private server for fswb's end-to-end tests
		ListenAddress 127.0.0.1
		Port $port
		HostKey $d/ssh_host_ed25519_key
		PidFile $d/sshd.pid
		AuthorizedKeysFile $d/authorized_keys
		PermitRootLogin prohibit-password
		PubkeyAuthentication yes
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		HostbasedAuthentication no
		UsePAM no
		StrictModes no
		Subsystem sftp internal-sftp
		LogLevel VERBOSE
		AcceptEnv none
		PermitUserEnvironment no
		ClientAliveInterval 5
		UseDNS no
		PrintMotd no
		PrintLastLog no
	EOF
}

# The namespace: set up, then held open by a sleeping process (so that the
# server can be restarted in it). Its PID in $d/holder, its identity in $d/ns.
_sshd_make_namespace()
{
	local d=$1 i holder
	rm -f "$d/ns-ready"
	# shellcheck disable=SC2016 # expanded by the shell in the namespace
	unshare -m --propagation private sh -euc '
		d=$1
		mkdir -p "$d/hostrun"
		mount -n --rbind /run "$d/hostrun"
		mount -n -t tmpfs -o mode=0755 fswb-e2e-run /run
		for e in "$d"/hostrun/* "$d"/hostrun/.[!.]*; do
			[ -e "$e" ] || [ -L "$e" ] || continue
			n=/run/${e##*/}
			case ${e##*/} in
			# sshd: ours; mount: libmount keeps its state of the mounts
			# there, and the namespace has mounts of its own
			sshd | mount) continue ;;
			esac
			if [ -L "$e" ]; then
				cp -P "$e" "$n"
			elif [ -d "$e" ]; then
				mkdir -p "$n"
				mount -n --rbind "$e" "$n"
			else
				[ -e "$n" ] || : >"$n"
				mount -n --bind "$e" "$n"
			fi
		done
		umount -n -l "$d/hostrun"
		mkdir -m 0755 /run/sshd /run/mount
		: >"$d/ns-ready"
		exec sleep infinity
	' sshd-namespace "$d" >>"$d/log" 2>&1 &
	holder=$!
	echo "$holder" >"$d/holder"
	for ((i = 0; i < SSHD_WAIT * 10; i++)); do
		[ -e "$d/ns-ready" ] && break
		kill -0 "$holder" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -e "$d/ns-ready" ]; then
		echo "sshd_start: the mount namespace could not be set up; $d/log:" >&2
		tail -n 20 "$d/log" >&2
		return 1
	fi
	# the sleeping process has the namespace once sh has exec'd it
	for ((i = 0; i < 50; i++)); do
		[ "$(_sshd_cmdline "$holder")" = "sleep infinity " ] && break
		sleep 0.1
	done
	_sshd_ns "$holder" >"$d/ns"
	if [ "$(cat "$d/ns")" = "$(_sshd_ns $$)" ] || [ ! -s "$d/ns" ]; then
		echo "sshd_start: the server's namespace is not a new one" >&2
		return 1
	fi
}

# Starts the listener in the namespace on PORT and waits until it listens.
# Returns 2 when the port was taken, 1 on any other failure.
_sshd_listen()
{
	local d=$1 port=$2 holder from pid i
	holder=$(cat "$d/holder")
	_sshd_write_config "$d" "$port"
	if ! nsenter -t "$holder" -m -- /usr/sbin/sshd -t -f "$d/sshd_config" >>"$d/log" 2>&1; then
		echo "sshd_start: sshd -t rejects $d/sshd_config; $d/log:" >&2
		tail -n 20 "$d/log" >&2
		return 1
	fi
	from=$(($(stat -c %s "$d/log") + 1))
	nsenter -t "$holder" -m -- /usr/sbin/sshd -D -e -f "$d/sshd_config" >>"$d/log" 2>&1 &
	pid=$!
	for ((i = 0; i < SSHD_WAIT * 10; i++)); do
		if tail -c "+$from" "$d/log" | grep -q "Server listening on 127.0.0.1 port $port\."; then
			echo "$pid" >"$d/listener"
			echo "$port" >"$d/port"
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
				return 0
			fi
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid" 2>/dev/null
			if tail -c "+$from" "$d/log" | grep -q "Cannot bind any address"; then
				return 2
			fi
			echo "sshd_start: sshd ended before it listened; $d/log:" >&2
			tail -c "+$from" "$d/log" | tail -n 20 >&2
			return 1
		fi
		sleep 0.1
	done
	echo "sshd_start: sshd does not listen on 127.0.0.1:$port after ${SSHD_WAIT} s; $d/log:" >&2
	tail -c "+$from" "$d/log" | tail -n 20 >&2
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 1
}

sshd_use()
{
	local d
	d=$(_sshd_dir "$1")
	[ -s "$d/port" ] || {
		echo "sshd_use: no server named $1" >&2
		return 1
	}
	SSHD_DIR=$d
	SSHD_PORT=$(cat "$d/port")
	SSHD_KEY=$d/id_ed25519
	SSHD_HOSTKEY_PUB=$d/ssh_host_ed25519_key.pub
	SSHD_HOSTKEY_FP=$(ssh-keygen -l -E sha256 -f "$SSHD_HOSTKEY_PUB" | awk '{ print $2 }')
	SSHD_KNOWN_HOST="[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$SSHD_HOSTKEY_PUB")"
	SSHD_LOG=$d/log
	export SSHD_DIR SSHD_PORT SSHD_KEY SSHD_HOSTKEY_PUB SSHD_HOSTKEY_FP SSHD_KNOWN_HOST SSHD_LOG
}

sshd_start()
{
	local name=$1 d tries rc port
	d=$(_sshd_dir "$name")
	if [ -e "$d" ]; then
		echo "sshd_start: $name was started already" >&2
		return 1
	fi
	mkdir -p "$d"
	chmod 0700 "$d"
	: >"$d/log"
	if ! ssh-keygen -q -t ed25519 -N '' -C "fswb-e2e-host-$name" -f "$d/ssh_host_ed25519_key" ||
		! ssh-keygen -q -t ed25519 -N '' -C "fswb-e2e-client-$name" -f "$d/id_ed25519"; then
		echo "sshd_start: ssh-keygen failed" >&2
		return 1
	fi
	cp "$d/id_ed25519.pub" "$d/authorized_keys"
	at_exit sshd_stop "$name"
	_sshd_make_namespace "$d" || return 1
	for ((tries = 0; tries < 10; tries++)); do
		port=$(_sshd_free_port)
		_sshd_listen "$d" "$port"
		rc=$?
		[ "$rc" -eq 2 ] && continue
		[ "$rc" -eq 0 ] || return 1
		sshd_use "$name"
		return 0
	done
	echo "sshd_start: no free port after 10 tries" >&2
	return 1
}

# Ends the listener only (the connections' sshd go on).
_sshd_stop_listener()
{
	local d=$1 pid i
	pid=$(cat "$d/listener" 2>/dev/null) || return 0
	rm -f "$d/listener"
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

sshd_rekey()
{
	local name=$1 d port
	d=$(_sshd_dir "$name")
	port=$(cat "$d/port" 2>/dev/null) || {
		echo "sshd_rekey: no server named $name" >&2
		return 1
	}
	rm -f "$d/new_host_key" "$d/new_host_key.pub"
	ssh-keygen -q -t ed25519 -N '' -C "fswb-e2e-host-$name" -f "$d/new_host_key" || return 1
	_sshd_stop_listener "$d"
	mv "$d/new_host_key" "$d/ssh_host_ed25519_key"
	mv "$d/new_host_key.pub" "$d/ssh_host_ed25519_key.pub"
	_sshd_listen "$d" "$port" || {
		echo "sshd_rekey: the server did not come back on port $port" >&2
		return 1
	}
	sshd_use "$name"
}

# Every sshd of NAME's namespace but the listener: the connections'
# privileged monitors and their unprivileged children. SIGKILL: their
# clients' connections close under them.
sshd_kill_sessions()
{
	local d listener p n=0
	d=$(_sshd_dir "$1")
	listener=$(cat "$d/listener" 2>/dev/null) || {
		echo "sshd_kill_sessions: $1 is not running" >&2
		return 1
	}
	for p in $(_sshd_ns_pids "$1"); do
		[ "$p" = "$listener" ] && continue
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = sshd ] || continue
		kill -KILL "$p" 2>/dev/null && n=$((n + 1))
	done
	echo "sshd_kill_sessions: killed $n sshd processes of $1" >&2
	return 0
}

sshd_exec()
{
	local d holder
	d=$(_sshd_dir "$1")
	shift
	holder=$(cat "$d/holder" 2>/dev/null) || return 1
	nsenter -t "$holder" -m -- "$@"
}

sshd_procs()
{
	local d holder listener p
	d=$(_sshd_dir "$1")
	holder=$(cat "$d/holder" 2>/dev/null)
	listener=$(cat "$d/listener" 2>/dev/null)
	for p in $(_sshd_ns_pids "$1"); do
		[ "$p" = "$holder" ] || [ "$p" = "$listener" ] && continue
		echo "$p $(_sshd_cmdline "$p")"
	done
	return 0
}

sshd_mounts()
{
	local d holder
	d=$(_sshd_dir "$1")
	holder=$(cat "$d/holder" 2>/dev/null) || return 1
	cat "/proc/$holder/mounts"
}

# Kills everything in NAME's namespace (TERM, then KILL after 5 s); the
# namespace and its mounts end with its last process.
sshd_stop()
{
	local d holder i pids p
	d=$(_sshd_dir "$1")
	holder=$(cat "$d/holder" 2>/dev/null) || return 0
	_sshd_stop_listener "$d"
	for ((i = 0; i < 100; i++)); do
		pids=$(_sshd_ns_pids "$1")
		[ -z "$pids" ] && break
		for p in $pids; do
			if [ "$i" -lt 50 ]; then
				kill -TERM "$p" 2>/dev/null
			else
				kill -KILL "$p" 2>/dev/null
			fi
		done
		sleep 0.1
	done
	wait "$holder" 2>/dev/null
	rm -f "$d/holder" "$d/port"
	if [ -n "$(_sshd_ns_pids "$1")" ]; then
		echo "sshd_stop: processes are left in $1's namespace: $(_sshd_ns_pids "$1" | tr '\n' ' ')" >&2
		return 1
	fi
	return 0
}

[ -n "$_sshd_self_test" ] || return 0

# ---- the self-test, with the real OpenSSH client ------------------------------

command -v ssh >/dev/null || _sshd_give_up "the ssh client is not installed"
SSH_OPTS=(-F none -o BatchMode=yes -o ConnectTimeout=10 -o UserKnownHostsFile="$T/known_hosts"
	-o GlobalKnownHostsFile=/dev/null -o LogLevel=ERROR)
# status_is NAME STATUS WANTED ERRFILE
status_is()
{
	if [ "$2" -eq "$3" ]; then pass "$1"; else fail "$1" "status $2, not $3: $(cat "$4")"; fi
}
rssh() { ssh "${SSH_OPTS[@]}" -i "$SSHD_KEY" -p "$SSHD_PORT" root@127.0.0.1 "$@"; }
# the host's mounts the server could add (other programs mount elsewhere)
mount_state() { grep -E " /run[ /]|fswb-e2e| ${T}[ /]" /proc/self/mounts; }
host_mounts=$(mount_state)
# what of the host's /run the server could change (the mtimes of the rest
# change under other programs)
run_state() { ls -A /run; ls -la /run/mount /run/sshd 2>&1; }
host_run=$(run_state)

if ! sshd_start a 2>"$T/start.err"; then
	fail "sshd_start a" "$(cat "$T/start.err")"
	done_testing
	exit
fi
pass "sshd_start a: listening on 127.0.0.1:$SSHD_PORT"
check "the host's /run is unchanged" test "$(run_state)" = "$host_run"
check "the host's mounts are unchanged" test "$(mount_state)" = "$host_mounts"
check "in the namespace, /run is a tmpfs" eval 'sshd_mounts a | grep -q "^fswb-e2e-run /run tmpfs "'
check "... with /run/sshd and /run/mount of its own" \
	eval 'sshd_exec a sh -c "[ -d /run/sshd ] && [ -d /run/mount ] && [ ! /run/mount -ef /proc/1/root/run/mount ]"'
# shellcheck disable=SC2010 # names in /run are plain
check "... and the rest of the host's /run" \
	test "$(sshd_exec a ls -A /run | grep -vxE 'sshd|mount' | sort)" = "$(ls -A /run | grep -vxE 'sshd|mount' | sort)"
check "the server's log says it listens" grep -q "Server listening on 127.0.0.1 port $SSHD_PORT" "$SSHD_LOG"
check "an unknown host key is refused by ssh with StrictHostKeyChecking=yes" \
	eval '! rssh -o StrictHostKeyChecking=yes true'
check "root logs in with the key (accept-new)" rssh -o StrictHostKeyChecking=accept-new true
check "known_hosts holds SSHD_KNOWN_HOST" grep -qxF "$SSHD_KNOWN_HOST" "$T/known_hosts"
check "the command runs in the server's namespace" \
	test "$(rssh -o StrictHostKeyChecking=yes readlink /proc/self/ns/mnt)" = "$(cat "$SSHD_DIR/ns")"
check "the session's environment is the server's (HOME=/root), not the test's" \
	test "$(rssh -o StrictHostKeyChecking=yes 'echo $HOME')" = /root
check "the server logged the key's fingerprint" \
	grep -q "Accepted publickey for root from 127.0.0.1 .*$(ssh-keygen -l -E sha256 -f "$SSHD_KEY.pub" | awk '{ print $2 }')" "$SSHD_LOG"
ssh-keygen -q -t ed25519 -N '' -f "$T/other_key"
check "another key is refused" \
	eval '! ssh "${SSH_OPTS[@]}" -o StrictHostKeyChecking=yes -i "$T/other_key" -p "$SSHD_PORT" root@127.0.0.1 true'
check "a password is never asked" \
	eval '! ssh "${SSH_OPTS[@]}" -o StrictHostKeyChecking=yes -o PubkeyAuthentication=no -p "$SSHD_PORT" root@127.0.0.1 true'
check "sftp is there" eval 'rssh -o StrictHostKeyChecking=yes -s sftp </dev/null; [ $? -ne 255 ]'

# a mount made in the namespace stays there
mkdir -p "$T/m"
check "sshd_exec mounts in the namespace" sshd_exec a mount -n -t tmpfs fswb-e2e-probe "$T/m"
check "... the session sees it" eval 'rssh -o StrictHostKeyChecking=yes grep -q fswb-e2e-probe /proc/mounts'
check "... the host does not" eval '! grep -q fswb-e2e-probe /proc/self/mounts'

# a session killed under its client
rssh -o StrictHostKeyChecking=yes 'sleep 300' >/dev/null 2>&1 &
client=$!
for ((i = 0; i < 100; i++)); do
	sshd_procs a | grep -q 'sleep 300' && break
	sleep 0.1
done
check "a session's command is one of sshd_procs" eval 'sshd_procs a | grep -q "sleep 300"'
sessions=$(sshd_procs a | grep -c 'sshd:')
check "... under its connection's sshd ($sessions)" test "$sessions" -ge 1
sshd_kill_sessions a 2>/dev/null
for ((i = 0; i < 100; i++)); do
	kill -0 "$client" 2>/dev/null || break
	sleep 0.1
done
check "sshd_kill_sessions: the client sees its connection end" eval '! kill -0 $client 2>/dev/null'
wait "$client"
check "... with ssh's status 255" test $? -eq 255
check "... no connection's sshd is left" eval '! sshd_procs a | grep -q "sshd:"'
check "... and the listener still takes connections" rssh -o StrictHostKeyChecking=yes true
# the session's command is orphaned, as on a real machine whose client went
sshd_exec a pkill -KILL -f '^sleep 300$' 2>/dev/null

old_fp=$SSHD_HOSTKEY_FP old_port=$SSHD_PORT
sshd_rekey a 2>"$T/rekey.err"
status_is "sshd_rekey" $? 0 "$T/rekey.err"
check "... on the same port" test "$SSHD_PORT" = "$old_port"
check "... with another host key" test "$SSHD_HOSTKEY_FP" != "$old_fp"
rssh -o StrictHostKeyChecking=yes true 2>"$T/rekey.err"
status_is "... which ssh refuses" $? 255 "$T/rekey.err"
check "... as changed" grep -q "REMOTE HOST IDENTIFICATION HAS CHANGED" "$T/rekey.err"
check "... ssh shows its fingerprint" grep -qF "$SSHD_HOSTKEY_FP" "$T/rekey.err"
check "... the namespace (and its mount) is the same" eval 'sshd_mounts a | grep -q fswb-e2e-probe'

# two servers side by side
if sshd_start b 2>"$T/start.err"; then
	pass "sshd_start b"
	check "b has its own port" test "$SSHD_PORT" != "$old_port"
	check "b takes a connection" rssh -o StrictHostKeyChecking=accept-new true
	check "b's key is not a's" eval '! ssh "${SSH_OPTS[@]}" -i "$T/sshd-a/id_ed25519" -p "$SSHD_PORT" root@127.0.0.1 true'
	sshd_use a
	check "sshd_use a" test "$SSHD_PORT" = "$old_port"
else
	fail "sshd_start b" "$(cat "$T/start.err")"
fi

rssh -o StrictHostKeyChecking=no 'sleep 300' >/dev/null 2>&1 &
client=$!
for ((i = 0; i < 100; i++)); do
	sshd_procs a | grep -q 'sleep 300' && break
	sleep 0.1
done
holder=$(cat "$T/sshd-a/holder")
sshd_stop a 2>"$T/stop.err"
status_is "sshd_stop a, with a session open" $? 0 "$T/stop.err"
wait "$client"
check "... its client ends, with ssh's status 255" test $? -eq 255
check "... no process of a is left" eval '! pgrep -f "$T/sshd-a" >/dev/null'
check "... its namespace is gone" eval '! kill -0 $holder 2>/dev/null'
check "... the port is free" eval '! (exec 3<>/dev/tcp/127.0.0.1/$old_port) 2>/dev/null'
sshd_stop b 2>"$T/stop.err"
status_is "sshd_stop b" $? 0 "$T/stop.err"
check "... no process of b is left" eval '! pgrep -f "$T/sshd-b" >/dev/null'
check "sshd_stop again is harmless" sshd_stop a
check "nothing is mounted under $T" eval '! grep -qF "$T" /proc/self/mounts'
check "the host's mounts are as before" test "$(mount_state)" = "$host_mounts"
check "the host's /run is as before" test "$(run_state)" = "$host_run"
done_testing
