#!/usr/bin/env bash
# The workbench end to end: the real binary in tmux, through the wizard (the
# mini-fstests tree, one test found by search, a second config) to a live
# run in real QEMU guests (TCG here), its run view while the guest works and
# when it is done, the failing test's detail, and the run in the history.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../ui/tmux-lib.bash"
ui_setup

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
MINI=$SRCDIR/tests/fixtures/mini-fstests
need_guest "the workbench's live run"
qemus() { pgrep -f "qemu-system-x86_64.*$FSWB_HOME" | wc -l; }
at_exit '[ "$(qemus)" -eq 0 ] || pkill -f "qemu-system-x86_64.*$FSWB_HOME"'

ui_start 100 30 FSWB_CACHE_DIR="$CACHE/fswb"
check_screen "welcome" "step 1 of 6"
ui_keys Enter
check_screen "kernel step" "step 2 of 6"
ui_keys Enter
check_screen "filesystem step" "step 3 of 6"
ui_keys Enter
check_screen "backend step" "step 4 of 6"
# Enter goes on once qemu is checked (with KVM or without)
check_screen "qemu checked" "ready: " 60
ui_keys Enter
check_screen "tests step" "step 5 of 6"
ui_keys f C-u "$MINI" Enter
check_screen "tests: the mini-fstests catalogue" "quick      10 tests, "
ui_keys End Enter
check_screen "one test by search" "Tests matching"
ui_keys g e n e r i c / 0 0 6
check_screen "search: generic/006" "Tests matching 'generic/006': 1"
ui_keys Enter
check_screen "review" "step 6 of 6"
check_screen "review: the command line" "--fstests-src $MINI"
check_screen "review: one test" "generic/006   (1 test)"
ui_keys Enter

# the live run: stages first, then the test, with the kernel log beside it
check_screen "run view" "0/1" 30
check_screen "the boot stage shows" "boot" 600
check_screen "the test starts, marked in the kernel log" "run fstests generic/006" 600
check_screen "the run ends" "the run has ended" 600
ui_settle
ui_screen >"$T/run.txt"
check "the test failed on its output" grep -qE "generic/006 .*output mismatch|generic/006 +[0-9]+s" "$T/run.txt"
check "the counts: 1 of 1, 1 failed" grep -qE "1/1 .* 0 .* 1 .* 0 +done" "$T/run.txt"
for ((i = 0; i < 50 && $(qemus) > 0; i++)); do sleep 0.2; done
check "no guest is left when the run is done" test "$(qemus)" -eq 0

# the kernel log scrolled back to its start: the guest's kernel booting
ui_keys Tab Home
check_screen "the kernel log from its start: the guest's kernel" "Linux version"
check_screen "the kernel log is no longer following" "scrolled (f follows)"
ui_keys f Tab

# Enter on the failed test: its golden-output diff
ui_keys Enter
check_screen "detail: the test" "generic/006"
check_screen "detail: the diff of the golden output" "out.bad"
ui_keys Escape
check_screen "back to the run view" "1/1"

# the run in the history
ui_keys Escape
ui_keys h
check_screen "history: the run" "1 failed"
ui_keys q
check_screen "q from the history: back to the review" "Enter start"

# a test that never ends: a look into its guest while it runs, then Stop
ui_keys 5
check_screen "back at the tests step" "step 5 of 6"
ui_keys End Enter C-u g e n e r i c / 0 1 1
check_screen "search: generic/011" "Tests matching 'generic/011': 1"
ui_keys Enter
check_screen "review: the hanging test" "generic/011   (1 test)"
ui_keys Enter
check_screen "the hanging test starts" "run fstests generic/011" 600
check_screen "the run view offers a look into the guest" "s look in"
# the kernel log can say the test began before check's own line reaches fswb:
# the look is for the test fswb knows is running (its row counts its seconds)
check_screen "the test's row says it runs" "s  running" 120
ui_keys s
check_screen "s: a look into the guest, said as such" "a look into the guest while its test runs" 30
ui_keys Enter
check_screen "the look's prompt says what it is" "[look: fsgqa, read-only]" 30
ui_keys "id -un | tr a-z A-Z; touch /opt/fstests/x" Enter
check_screen "the look is the unprivileged fsgqa" "FSGQA" 30
check_screen "which cannot change the test's tree" "Permission denied" 30
ui_keys "exit" Enter
check_screen "exit: back to the run view" "run fstests generic/011" 30
ui_screen >"$T/look.txt"
check "the test still runs after the look" grep -qE "0/1" "$T/look.txt"
ui_keys s
check_screen "a second look" "a look into the guest while its test runs" 30
ui_keys C-]
check_screen "Ctrl-] leaves it too" "run fstests generic/011" 30
ui_keys q
check_screen "q: the stop question, framed over the run" "Stop the run?" 30
ui_screen >"$T/stop.txt"
check "the stop question has its frame" grep -qE "[┌+][─-]+[┐+]" "$T/stop.txt"
ui_keys y
check_screen "the run stops; the test says it was interrupted" "interrupted" 120
for ((i = 0; i < 100 && $(qemus) > 0; i++)); do sleep 0.2; done
check "no guest is left after the stop" test "$(qemus)" -eq 0
ui_keys Escape
check_screen "back to the review" "Enter start"
ui_keys q
for ((i = 0; i < 50; i++)); do ui_alive || break; sleep 0.1; done
check "q on the review leaves the workbench" test "$(_tmux display-message -p -t "$UI_SESSION" '#{pane_dead}')" = 1
check "the plan of the last run whose test started is remembered" \
	grep -qF '"generic/011"' "$FSWB_HOME/config/last-plan.json"
check "the run directory has run.json" bash -c "ls '$FSWB_HOME'/data/runs/*/run.json"
check "run.json has generic/006 failed" bash -c "grep -A3 '\"generic/006\"' '$FSWB_HOME'/data/runs/*/run.json | grep -q '\"fail\"'"
check "no sanitizer reports" sanitizers_clean
done_testing
