#!/usr/bin/env bash
# The wizard, step by step at 80x24 and 200x60: welcome with this machine's
# findings, kernel, filesystem (details of the highlighted one), backend
# with its probe (CPUs and memory checked against this host as typed), tests
# (presets with counts from the catalogue and the highlighted one's whole
# description, a group, one test by incremental search, exclusions, an
# fstests path that does not exist refused), review with the `fswb run` line;
# a run that fails to start not remembered; a failed test's detail from a
# recorded run.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tmux-lib.bash"
ui_setup
MINI=$SRCDIR/tests/fixtures/mini-fstests

# an installed kernel of this test's own (no dependence on the host's /boot)
mkdir -p "$T/boot"
: >"$T/boot/vmlinuz-9.9.9-fswbtest"
ui_start 80 24 FSWB_BOOT_DIR="$T/boot"
check_screen "welcome" "fswb · fstests workbench"
ui_settle; ui_screen >"$T/welcome.txt"
check "welcome: step 1 of 6" grep -qF "step 1 of 6" "$T/welcome.txt"
check "welcome: what fstests is" grep -qF "fstests is the Linux filesystem test suite" "$T/welcome.txt"
check "welcome: this machine" grep -qF "This machine" "$T/welcome.txt"
# no fstests tree yet: the estimate says when it will be known
check "welcome: smoke run estimate" grep -qF "How long a smoke run takes is known once fswb has the fstests tree" "$T/welcome.txt"
check "welcome: key bar" grep -qE "Enter next +\? docs +d doctor details +h history +q quit" "$T/welcome.txt"

ui_keys Enter
check_screen "kernel step" "step 2 of 6"
check_screen "kernel: automatic choice" "automatic (a tree here, else installed)"
check_screen "kernel: checked for the config" "checked for ext4/4k"
ui_keys Enter
check_screen "filesystem step" "step 3 of 6"
ui_settle; ui_screen >"$T/fs.txt"
check "filesystem: configs listed" grep -qE "ext4/1k +ext4 with 1" "$T/fs.txt"
check "filesystem: the chosen one marked" grep -qE "▸ ext4/4k" "$T/fs.txt"
check "filesystem: details of the highlighted" grep -qE "│ ext4/4k$" "$T/fs.txt"
check "filesystem: its disks" grep -qE "disks +TEST 5 GiB, SCRATCH 5 GiB" "$T/fs.txt"
# add xfs/4k with Space: nine configurations below it
ui_keys End Up Up Up Up Up Up Up Up Up
ui_keys Space
check_screen "filesystem: Space selects a second" "▸ xfs/4k"
ui_keys Enter
check_screen "backend step" "step 4 of 6"
check_screen "backend: qemu with its probe" "qemu "
check_screen "backend: CPUs" "2 CPUs"
# values are checked as they are typed: a guest's size against this host's
# (its numbers read here, whatever they are)
cores=$(nproc)
ui_keys c C-u $((cores + 1)) Enter
check_screen "backend: more CPUs than this host's cores are refused" "cpus: $((cores + 1)) per guest is more than this host's $cores core"
check_screen "backend: the CPUs are unchanged" "2 CPUs"
ui_keys m C-u 100T Enter
check_screen "backend: 100 TiB of memory is refused with the host's" "mem: 100 TiB per guest is more than this host can give: it has"
ui_keys m C-u 0 Enter
check_screen "backend: no memory is refused with the least" "'0' is not a memory size of at least 256M"
check_screen "backend: the memory is unchanged" "2 GiB memory"
ui_keys c C-u 1 Enter
check_screen "backend: CPUs changed" "Each guest gets 1 CPU and 2 GiB memory"
check_screen "backend: guests at once, auto by default" "Guests at once  auto  (s changes it"
# the auto count is this host's: the words say how it came about, whatever the count
check "backend: why that many guests" bash -c "$(declare -f ui_screen _tmux); UI_SOCK=$UI_SOCK UI_SESSION=$UI_SESSION; ui_screen | grep -qE '^    (1 guest: this host has [0-9]+ cores?(, keeps 1 for itself,)? and each guest takes 1|[0-9]+ guests at once: \\([0-9]+ cores - 1 for this host\\) / 1 CPU per guest = [0-9]+, )'"
ui_keys s C-u 0 Enter
check_screen "backend: a bad count is refused" "'0' is not auto or a number of guests from 1 to 64"
ui_keys s C-u 2 Enter
check_screen "backend: two guests" "2 guests at once (--shards 2)"
ui_keys Enter
check_screen "tests step" "step 5 of 6"
ui_keys f C-u "$T/no-such-fstests" Enter
check_screen "tests: a path that does not exist and is no URL is refused" "fstests_src: '$T/no-such-fstests' does not exist and is no"
check_screen "tests: fstests unchanged" "fstests: upstream, built into the appliance"
ui_keys f C-u "$MINI" Enter
check_screen "tests: preset counted from the catalogue" "10 tests, "
check "tests: the preset's estimate" bash -c "$(declare -f ui_screen _tmux); UI_SOCK=$UI_SOCK UI_SESSION=$UI_SESSION; ui_screen | grep -qE 'quick +10 tests, (~[0-9]+ min|<1 min) on 2 guests: The quick group'"
ui_settle; ui_screen >"$T/tests.txt"
check "tests: the three presets" grep -qE "auto .*quick .*" <(tr '\n' ' ' <"$T/tests.txt")
# the highlighted set's description whole below the list; each row keeps its time
check_screen "tests: the set's whole description" "tests upstream), each soak test capped at 3 minutes"
ui_keys x C-u dangerous Enter
check_screen "tests: exclusion shown" "leave out groups: dangerous"
# a group from the catalogue, narrowed by typing
ui_keys Home Down Down Down Down Enter
check_screen "groups: list with counts" "Groups matching"
ui_keys s e l f
check_screen "groups: narrowed" "Groups matching 'self': 1"
check "groups: the group and its count" bash -c "$(declare -f ui_screen _tmux); UI_SOCK=$UI_SOCK UI_SESSION=$UI_SESSION; ui_screen | grep -qE '^  selftest +2 tests'"
ui_keys Enter
check_screen "review after a group" "step 6 of 6"
ui_settle; ui_screen >"$T/review.txt"
check "review: the kernel automatic stands for now, as step 2 says" \
	sh -c "grep -qF 'kernel      automatic: now installed 9.9.9-fswbtest' '$T/review.txt' ||
		! grep -F 'kernel  ' '$T/review.txt'"
check "review: filesystems" grep -qF "filesystem  ext4/4k, xfs/4k" "$T/review.txt"
check "review: backend and CPUs" grep -qE "backend +qemu · 1 CPU · 2 GiB" "$T/review.txt"
check "review: the guests" grep -qE "guests +2 guests at once \(--shards 2\)" "$T/review.txt"
check "review: the group" grep -qE "tests +group selftest" "$T/review.txt"
# selftest has no test in generic/ or ext4/, where check looks for ext4's groups
check "review: estimate" grep -qE "estimate +none: this choice selects no test" "$T/review.txt"
check "review: the command line" grep -qF "fswb run -c ext4/4k,xfs/4k -g selftest -x dangerous" "$T/review.txt"

# one test by incremental search over names and descriptions
ui_keys 5 End Enter
check_screen "test search" "Tests matching"
ui_keys L O G W R I T E S
check_screen "search: one match, found by its description" "Tests matching 'LOGWRITES': 1"
check_screen "search: the test" "generic/004      Needs a dm-log-writes device"
ui_keys Enter
check_screen "review after one test" "generic/004   (1 test)"
ui_settle; ui_screen >"$T/review2.txt"
check "review: the test in the command" grep -qF -- "-x dangerous --fstests-src $MINI --cpus 1 --shards 2 generic/004" <(sed -n '/The same run/,/^$/p' "$T/review2.txt" | tail -n +2 | sed 's/^ *//' | tr '\n' ' ')

# back with Esc, quit from the welcome
ui_keys Escape Escape Escape Escape Escape
check_screen "Esc goes back to the welcome" "step 1 of 6"
ui_keys q
check "q quits" ui_gone
ui_stop

# the same at 200x60
ui_start 200 60
check_screen "large: welcome" "step 1 of 6"
ui_keys 6
check_screen "large: review" "step 6 of 6"
ui_settle; ui_screen >"$T/big.txt"
check "large: key bar on the last line" grep -qE "Enter start" <(sed -n 60p "$T/big.txt")
ui_stop

# ASCII
ui_start 80 24 LC_ALL=C LANG=C
check_screen "ascii: welcome" "step 1 of 6"
ui_settle; ui_screen >"$T/ascii.txt"
check "ascii: only ASCII" bash -c "! LC_ALL=C grep -qP '[^\x00-\x7f]' '$T/ascii.txt'"
check "ascii: arrows spelled" grep -qF "pick a kernel -> pick" "$T/ascii.txt"
ui_stop

# a run that fails to start (the kernel is no kernel) is not remembered; the
# wizard still starts from the defaults next time
printf 'not a kernel\n' >"$T/bogus"
printf '%s\n' '<Enter>' "p<C-u>$T/bogus<Enter>" 6 ':save-screen review' '<Enter>' :wait-run \
	':save-screen run' >"$T/failed.keys"
(cd "$T" && LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb FSWB_NO_DISPLAY=1 FSWB_SCREEN=80x24 \
	FSWB_SCRIPT=failed.keys "$FSWB" tui >/dev/null 2>"$T/failed.err")
check "a run that fails to start: the review offered it" grep -qF "kernel      image $T/bogus" "$T/review"
check "a run that fails to start: its error is shown" grep -qF "is not a kernel image" "$T/run"
check "a run that fails to start: its plan is not remembered" test ! -e "$FSWB_HOME/config/last-plan.json"

# the detail of a failed test from a recorded run: the golden diff computed
# from the .out (the run's plan names mini-fstests) and .out.bad
mkdir -p "$FSWB_HOME/data/runs"
cp -r "$SRCDIR/tests/ui/fixtures/runs/20261203-170239" "$FSWB_HOME/data/runs/"
sed -i "s|\"fstests_src\": .*|\"fstests_src\": \"$MINI\",|" "$FSWB_HOME/data/runs/20261203-170239/plan.json"
ui_start 80 24 -- --open 20261203-170239
check_screen "run view of the recorded run" "5/5"
ui_keys Enter
check_screen "detail opens on the first failure" "generic/006 · output mismatch"
ui_settle; ui_screen >"$T/detail.txt"
check "detail: diff header" grep -qF -- "--- tests/generic/006.out" "$T/detail.txt"
check "detail: removed line" grep -qE "^ -size 8192" "$T/detail.txt"
check "detail: added line" grep -qE "^ \+size 4096" "$T/detail.txt"
check "detail: panes" grep -qE "\[diff\] +full +kernel log +hints" "$T/detail.txt"
check "detail: keys" grep -qE "r rerun alone +s shell" "$T/detail.txt"
ui_keys Tab
check_screen "detail: the .full pane" "[full]"
ui_keys Tab
check_screen "detail: the test's kernel log" "run fstests generic/006"
ui_keys Tab
check_screen "detail: hints" "output mismatch: the test printed"
check_screen "detail: the key bar offers a shell in the test's guest" "shell"
ui_keys Escape Down Down
ui_keys Enter
check_screen "detail of the dmesg failure starts at its kernel log" "[kernel log (!)]"
check_screen "detail: the WARNING line" "WARNING: mini-fstests generic/008"
ui_keys Escape Up Up Enter
check_screen "detail of a not-run test" "generic/004 · notrun"
check_screen "not run: the explanation" "LOGWRITES_DEV"
ui_stop

# the program has ended (above): its sanitizer reports, if any, are written
check "no sanitizer reports" sanitizers_clean
done_testing
