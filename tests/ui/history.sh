#!/usr/bin/env bash
# The history and a recorded run replayed into the run view: the list of
# past runs, opening one, the test list, counts, the kernel log, compare.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tmux-lib.bash"
ui_setup

mkdir -p "$FSWB_HOME/data/runs"
cp -r "$SRCDIR/tests/ui/fixtures/runs/"* "$FSWB_HOME/data/runs/"

ui_start 80 24 -- --history
check_screen "history opens" "fswb · history"
check_screen "history lists both runs" "2 runs"
ui_settle; ui_screen >"$T/hist.txt"
check "newest run first" grep -qE '2026-12-03 17:07 +ext4/4k' <(sed -n 4p "$T/hist.txt")
check "summary of the failed run" grep -qF "2 passed, 2 failed, 1 not run" "$T/hist.txt"
check "summary of the crashed run" grep -qF "0 passed, 1 failed" "$T/hist.txt"
check "key bar" grep -qE 'Enter open +Space mark +c compare' "$T/hist.txt"

# open the older run (the second line)
ui_keys Down Enter
check_screen "run view opens" "run 20261203-170239"
ui_settle; ui_screen >"$T/run.txt"
check "progress counts" grep -qE '5/5 +✓ 2 +✗ 2 +– 1 +done' "$T/run.txt"
check "stages" grep -qE 'kernel ✓ +appliance ✓ +boot ✓ +tests ✓ +results ✓' "$T/run.txt"
check "failed test with its reason" grep -qE '✗ generic/006 +6s +mismatch' "$T/run.txt"
check "dmesg failure" grep -qE '✗ generic/008 +11s +dmesg' "$T/run.txt"
check "not run test" grep -qE '– generic/004 +3s +not run' "$T/run.txt"
check "passed test" grep -qE '✓ generic/001 +9s' "$T/run.txt"
check "KVM warning shown" grep -qF "warning: KVM is not usable" "$T/run.txt"
check "log pane beside the list" grep -qE 'generic/00[0-9].*│' "$T/run.txt"
check "total time" grep -qE '3:41 total' "$T/run.txt"

# the log: Tab to it, Home to the top shows the boot banner
ui_keys Tab Home
check_screen "log scrollback to the start" "Linux version 6.1.0"
check_screen "scrolled state shown" "scrolled (f follows)"
ui_keys f
check_screen "follow again" "follow ▼"

# back to the history, mark both, compare
ui_keys q
check_screen "back in the history" "2 runs"
ui_keys Home Space Space c
check_screen "compare view" "compare 20261203-170239 → 20261203-170725"
ui_settle; ui_screen >"$T/cmp.txt"
check "compare: the crash is a new failure" grep -qE "new failure +ext4/4k generic/010 +- +crashed" "$T/cmp.txt"
check "compare: tests only in the older run" grep -qF "only in the older run" "$T/cmp.txt"
ui_keys q q
check "q from the history quits" ui_gone
ui_stop

# a run that failed to start and a shell session: named so, the whole cause readable
cp -r "$SRCDIR/tests/ui/fixtures/failed-runs/"* "$FSWB_HOME/data/runs/"
ui_start 80 24 -- --history
check_screen "history with the failed run" "4 runs"
ui_settle; ui_screen >"$T/failed.txt"
check "a shell session is not a test run" grep -qE '2026-12-04 09:15 +- +shell session' "$T/failed.txt"
check "no '0 passed' for the shell session" sh -c "! grep -E '09:15.*passed' '$T/failed.txt'"
ui_keys Down
check_screen "the failed run selected" "failed: the kernel could not be built"
ui_settle; ui_screen >"$T/failed.txt"
check "no '0 passed' for the failed run" sh -c "! grep -E '09:00.*passed' '$T/failed.txt'"
check "the whole cause under the list" grep -qF "whole build log" "$T/failed.txt"
ui_stop

# 200x60: the same run, more room
ui_start 200 60 -- --open 20261203-170239
check_screen "large: run view" "run 20261203-170239"
ui_settle; ui_screen >"$T/big.txt"
check "large: key bar at the bottom" grep -qE 'Enter details' <(sed -n 60p "$T/big.txt")
check "large: marker lines of test starts" grep -qE '▶ \[ +[0-9.]+\] run fstests generic/008' "$T/big.txt"
ui_stop

# the detail of a failure writes its report for the mailing list
ui_start 80 24 -- --open 20261203-170239
check_screen "report: run view" "run 20261203-170239"
ui_keys Down Down Down Enter
check_screen "report: the detail of generic/008" "m mail report"
ui_keys m
check_screen "report: said where it is" "the report for the mailing list is in"
R=$FSWB_HOME/data/runs/20261203-170239/report-generic-008.txt
check "report: the file has the failure" grep -q '^generic/008 on ext4/4k: fail after 11s$' "$R"
check "report: with its kernel warning" grep -q '^    WARNING: mini-fstests generic/008' "$R"
check "report: only that test" test "$(grep -c '^generic/00[0-9] on ' "$R")" -eq 1
ui_stop

# ASCII: LANG=C gives ASCII marks and borders only
ui_start 80 24 LC_ALL=C LANG=C -- --open 20261203-170239
check_screen "ascii: run view" "run 20261203-170239"
ui_settle; ui_screen >"$T/ascii.txt"
check "ascii: only ASCII on the screen" bash -c "! LC_ALL=C grep -qP '[^\x00-\x7f]' '$T/ascii.txt'"
check "ascii: marks" grep -qE 'x generic/006 +6s +mismatch' "$T/ascii.txt"
check "ascii: progress bar" grep -qE '#### .*5/5' "$T/ascii.txt"
ui_stop

# NO_COLOR still draws everything
ui_start 80 24 NO_COLOR=1 -- --open 20261203-170239
check_screen "NO_COLOR: run view" "5/5"
ui_stop

# a run id that does not exist: a message, and the wizard
ui_start 80 24 -- --open no-such-run
check_screen "unknown run: message" "no run 'no-such-run'"
ui_stop

# the program has ended (above): its sanitizer reports, if any, are written
check "no sanitizer reports" sanitizers_clean
done_testing
