#!/usr/bin/env bash
# The workbench on the libvirt backend, end to end: the real binary in
# tmux. In the backend step libvirt is offered; with no daemon at its
# default URI it says so and offers an embedded driver, which needs none;
# the URI is typed (o), a bad one refused at once; then a run of one test
# in a TCG domain, live with its kernel log, and the choice remembered.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../ui/tmux-lib.bash"
ui_setup

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests
need_guest "the workbench on the libvirt backend"
EMBED=$T/embed
qemus() { pgrep -f "qemu-system-x86_64.*fswb-" | wc -l; }

ui_start 120 40
check_screen "welcome" "step 1 of 6"
ui_keys 3
check_screen "filesystem step" "step 3 of 6"
ui_keys Enter
check_screen "backend step" "step 4 of 6"
ui_keys Down
check_screen "libvirt is offered" "a libvirt domain (qemu:///system"
check_screen "no daemon at the default URI is said" "not usable: qemu:///system?socket=/nonexistent" 20
check_screen "... and an embedded driver is offered" "uri=qemu:///embed?root="
ui_keys o C-u "uri=qemu+ssh://-x/system" Enter
check_screen "a hostile URI is refused at once" "is not a host name"
ui_keys o C-u "uri=qemu:///embed?root=$EMBED accel=tcg" Enter
check_screen "the options are shown" "options: uri=qemu:///embed?root=$EMBED accel=tcg"
check_screen "the embedded driver is ready" "ready: qemu:///embed?root=$EMBED (an embedded driver" 20
ui_keys Enter
check_screen "tests step" "step 5 of 6"
ui_pick_mini_test generic/001
check_screen "review: the backend" "libvirt"
ui_keys Enter
check_screen "the run ends" "the run has ended" 400
check_screen "generic/001 is listed" "generic/001"
check_screen "the domain's kernel log is beside it" "run fstests generic/001" 30
ui_keys q
ui_stop
run=$(ls -td "$FSWB_HOME"/data/runs/*/ | head -n 1)
check "run.json: generic/001 passed" \
	test "$(jq -r '.sections[].tests[] | select(.test == "generic/001") | .status' "$run/run.json")" = pass
check "run.json: the backend is libvirt" test "$(jq -r .backend "$run/run.json")" = libvirt
check "the URI is remembered" grep -rqF "qemu:///embed?root=$EMBED" "$FSWB_HOME/config"
check "no QEMU is left" test "$(qemus)" -eq 0
check "no sanitizer report" sanitizers_clean
done_testing
