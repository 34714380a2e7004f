# Helpers for the TUI's screen tests: the real binary in a detached tmux
# session of a fixed size, keys sent with send-keys, screens read with
# capture-pane. Source after tests/lib.sh.
#
#   ui_setup                       finds the binary (UI_BIN); skips all when it cannot
#   ui_start COLS ROWS [ENV=V..] [-- ARGS..]   start it in a fresh session
#   ui_keys KEY...                 tmux send-keys (Enter, Escape, Tab, Up, C-c, "text")
#   ui_wait TEXT [SECONDS]         wait until the screen shows TEXT (grep -F); 1 if never
#   ui_screen                      the screen as text
#   ui_settle                      wait until the screen stops changing (at most 5 s)
#   ui_alive                       whether the program still runs
#   ui_gone [SECONDS]              wait until it has ended
#   ui_stop                        end the session
#   ui_pick_mini_test TEST         at the wizard's tests step: mini-fstests ($MINI)
#                                  as the tree (f), TEST found by search and taken;
#                                  each screen checked, on to the review
# Whether a screen fits its width is for fswb's own virtual screen
# (tests/ui/screens.sh), not for a tmux capture: tmux wraps at the pane width.
BUILD=${BUILD:-build}
UI_SOCK="fswb-ui-$$"
UI_SESSION=t

_tmux() { tmux -u -L "$UI_SOCK" -f /dev/null "$@"; }

ui_setup() {
	if ! command -v tmux >/dev/null; then
		skip "tmux" "tmux is not installed"
		done_testing
		exit 0
	fi
	UI_BIN=$FSWB
	UI_ARGS=(tui)
	at_exit '_tmux kill-server 2>/dev/null'
}

ui_start() {
	local cols=$1 rows=$2
	shift 2
	local envs=() args=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	[ "${1:-}" = "--" ] && shift
	args=("$@")
	_tmux kill-session -t "$UI_SESSION" 2>/dev/null
	_tmux new-session -d -s "$UI_SESSION" -x "$cols" -y "$rows" \
		env TERM=screen-256color FSWB_HOME="$FSWB_HOME" HOME="$HOME" TZ=UTC \
		FSWB_DATADIR="$FSWB_DATADIR" ASAN_OPTIONS="log_path=$T/sanitizer:detect_leaks=1" \
		UBSAN_OPTIONS="log_path=$T/sanitizer:print_stacktrace=1" "${envs[@]}" \
		"$UI_BIN" "${UI_ARGS[@]}" "${args[@]}"
	_tmux set-option -t "$UI_SESSION" remain-on-exit on >/dev/null 2>&1
}

ui_keys() { _tmux send-keys -t "$UI_SESSION" "$@"; }
ui_screen() { _tmux capture-pane -p -t "$UI_SESSION"; }

ui_wait() {
	local text=$1 secs=${2:-10} i
	for ((i = 0; i < secs * 20; i++)); do
		if ui_screen | grep -qF -- "$text"; then
			return 0
		fi
		sleep 0.05
	done
	return 1
}

ui_settle() {
	local prev='' cur i
	for ((i = 0; i < 25; i++)); do
		cur=$(ui_screen)
		[ -n "$prev" ] && [ "$cur" = "$prev" ] && return 0
		prev=$cur
		sleep 0.2
	done
}

ui_alive() {
	[ "$(_tmux display-message -p -t "$UI_SESSION" '#{pane_dead}' 2>/dev/null)" = 0 ]
}

# ui_gone [SECONDS]: wait until the program has ended (at most 5 s); 1 if it has not
ui_gone() {
	local i
	for ((i = 0; i < ${1:-5} * 20; i++)); do
		ui_alive || return 0
		sleep 0.05
	done
	return 1
}

# The exit status of the program after it ended (remain-on-exit keeps the pane).
ui_exit_status() { _tmux display-message -p -t "$UI_SESSION" '#{pane_dead_status}'; }

ui_stop() { _tmux kill-session -t "$UI_SESSION" 2>/dev/null || true; }

# sanitizers_clean: an ASan/UBSan build reported nothing (leaks included) so far
sanitizers_clean() {
	local f bad=0
	for f in "$T"/sanitizer.*; do
		[ -e "$f" ] || continue
		cat "$f" >&2
		bad=1
	done
	[ $bad = 0 ]
}

# check_screen NAME TEXT: the screen shows TEXT (fixed string)
check_screen() {
	local name=$1 text=$2
	if ui_wait "$text" "${3:-10}"; then
		pass "$name"
	else
		fail "$name" "expected '$text' on the screen:
$(ui_screen)"
	fi
}


ui_pick_mini_test() {
	local test=$1
	ui_keys f C-u "$MINI" Enter
	check_screen "tests: the mini-fstests catalogue" "quick      10 tests, "
	ui_keys End Enter
	check_screen "one test by search" "Tests matching"
	# a key at a time, as typed
	ui_keys $(sed 's/./& /g' <<<"$test")
	check_screen "search: $test" "Tests matching '$test': 1"
	ui_keys Enter
	check_screen "review" "step 6 of 6"
}
